import { createHash } from 'node:crypto';
import { invalidRequest } from '../../errors/gateway-error.js';
import { IMAGE_SIZES, type ImageGenerationRequest, type ImageResponse } from '../../protocol/images.js';
import type { Usage } from '../../protocol/usage.js';
import type { Outcome, UploadedFile } from '../../pipeline/stage.js';
import type { Invocation } from '../provider.js';
import { applyMarkers } from './local-markers.js';
import { encodeGradientPng, type Rgb } from './png-encoder.js';
import { sniffImage } from './sniff-image.js';

const CACHE_ENTRIES = 64;
const MAX_EDGE = 4096;
const DEFAULT_SIZE = '1024x1024';

/** Generates and edits images; encoded PNGs are cached per (size, colours), so repeats cost nothing. */
export interface LocalImages {
  generate(invocation: Invocation): Promise<Outcome>;
  edit(invocation: Invocation): Promise<Outcome>;
}

export function createLocalImages(now: () => number): LocalImages {
  const cache = new Map<string, string>();

  function pngBase64(width: number, height: number, seed: string): string {
    const digest = createHash('sha256').update(seed).digest();
    const top: Rgb = [digest[0], digest[1], digest[2]];
    const bottom: Rgb = [digest[3], digest[4], digest[5]];
    const key = `${width}x${height}:${digest.subarray(0, 6).toString('hex')}`;
    const cached = cache.get(key);
    if (cached !== undefined) {
      cache.delete(key);
      cache.set(key, cached);
      return cached;
    }
    const encoded = encodeGradientPng(width, height, top, bottom).toString('base64');
    cache.set(key, encoded);
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    return encoded;
  }

  function respond(prompt: string, count: number, width: number, height: number, quality: string, seedPrefix: string): Outcome {
    const size = `${width}x${height}`;
    const body: ImageResponse = {
      created: Math.floor(now() / 1000),
      data: Array.from({ length: count }, (_, index) => ({ b64_json: pngBase64(width, height, `${seedPrefix}\u0000${prompt}\u0000${index}`) })),
    };
    const usage: Usage = { images: [{ size, quality, count }] };
    return { kind: 'json', body, usage };
  }

  return {
    async generate(invocation) {
      const request = invocation.call.request as unknown as ImageGenerationRequest;
      await applyMarkers(request.prompt, invocation.signal);
      const [width, height] = parseSize(request.size ?? DEFAULT_SIZE);
      return respond(request.prompt, request.n ?? 1, width, height, request.quality ?? 'auto', 'generate');
    },
    async edit(invocation) {
      const { call } = invocation;
      const request = call.request as Record<string, unknown>;
      const prompt = typeof request['prompt'] === 'string' ? request['prompt'] : '';
      await applyMarkers(prompt, invocation.signal);
      const image = uploaded(call.files, request, 'image');
      if (!image) throw invalidRequest('image is required.', 'image');
      const sniffed = sniffImage(image.bytes);
      if (!sniffed) throw invalidRequest('image must be a PNG, JPEG or WebP file.', 'image');
      const mask = uploaded(call.files, request, 'mask');
      if (mask && !sniffImage(mask.bytes)) throw invalidRequest('mask must be a PNG, JPEG or WebP file.', 'mask');
      const [width, height] =
        typeof request['size'] === 'string' && (IMAGE_SIZES as readonly string[]).includes(request['size'])
          ? parseSize(request['size'])
          : sniffed.width && sniffed.height && sniffed.width <= MAX_EDGE && sniffed.height <= MAX_EDGE
            ? [sniffed.width, sniffed.height]
            : parseSize(DEFAULT_SIZE);
      const count = typeof request['n'] === 'number' ? request['n'] : Number(request['n'] ?? 1) || 1;
      const quality = typeof request['quality'] === 'string' ? request['quality'] : 'auto';
      // Every image counts, in order (and the mask): a different second image is a different edit.
      const digest = createHash('sha256');
      for (const [index, each] of [image, ...(image.more ?? [])].entries()) {
        if (index > 0 && !sniffImage(each.bytes)) throw invalidRequest(`image ${index + 1} must be a PNG, JPEG or WebP file.`, 'image');
        digest.update(`${each.bytes.length}:`).update(each.bytes);
      }
      if (mask) digest.update('mask:').update(mask.bytes);
      const imageDigest = digest.digest('hex');
      return respond(prompt, count, width, height, quality, `edit:${imageDigest}`);
    },
  };
}

/** Multipart files arrive in `call.files`; SDKs name a single image `image` or `image[]`. */
function uploaded(
  files: Readonly<Record<string, UploadedFile>> | undefined,
  request: Record<string, unknown>,
  field: string,
): UploadedFile | undefined {
  const candidate = files?.[field] ?? files?.[`${field}[]`] ?? request[field];
  if (typeof candidate === 'object' && candidate !== null && Buffer.isBuffer((candidate as UploadedFile).bytes)) return candidate as UploadedFile;
  return undefined;
}

function parseSize(size: string): [number, number] {
  const [width, height] = size.split('x').map(Number);
  return [width, height];
}
