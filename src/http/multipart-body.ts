import type { Readable } from 'node:stream';
import { GatewayError } from '../errors/gateway-error.js';
import type { UploadedFile } from '../pipeline/stage.js';

export interface MultipartBody {
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
}

export interface MultipartLimits {
  /** Largest file (GW_FILE_LIMIT_BYTES). */
  fileSize: number;
  files: number;
  fields: number;
  /** Largest text field. */
  fieldSize: number;
  parts: number;
}

export function multipartLimits(fileLimitBytes: number): MultipartLimits {
  return { fileSize: fileLimitBytes, files: 4, fields: 32, fieldSize: 1024 * 1024, parts: 40 };
}

/**
 * What the multipart content-type parser leaves as the request body: the unread stream and the
 * limits to read it under. Only the two upload endpoints read it (readMultipartBody); the parser
 * behind them (busboy) is loaded on the first upload, not in every gateway.
 */
export class PendingMultipart {
  constructor(
    readonly stream: Readable,
    readonly headers: Record<string, string | string[] | undefined>,
    readonly limits: MultipartLimits,
  ) {}
}

const TOO_LARGE = 'An uploaded file or form is larger than this gateway accepts (see GW_FILE_LIMIT_BYTES).';
const MALFORMED = 'The multipart/form-data body is malformed.';

type BusboyConstructor = (typeof import('@fastify/busboy'))['Busboy'];
let busboyModule: Promise<{ Busboy: BusboyConstructor }> | undefined;

/**
 * Reads a multipart/form-data body fully (files are small enough for memory within the documented
 * GW_FILE_LIMIT_BYTES). Past a limit the client gets 413, and a malformed body 400.
 */
export async function readMultipartBody(request: { readonly body: unknown }, fileFields: readonly string[]): Promise<MultipartBody> {
  const pending = request.body;
  if (!(pending instanceof PendingMultipart)) {
    throw new GatewayError('invalid_request', 'This endpoint takes multipart/form-data.');
  }
  const { Busboy } = await (busboyModule ??= import('@fastify/busboy'));
  const { limits } = pending;
  return new Promise<MultipartBody>((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: Record<string, UploadedFile> = {};
    const seen = new Set<string>();
    let failed = false;
    let openFiles = 0;
    let finished = false;
    const fail = (error: GatewayError) => {
      if (failed) return;
      failed = true;
      pending.stream.unpipe(parser);
      // The rest of the body is read and dropped, so the connection stays usable for the answer.
      pending.stream.resume();
      reject(error);
    };
    const settleIfDone = () => {
      if (!failed && finished && openFiles === 0) resolve({ fields, files });
    };
    let parser: ReturnType<BusboyConstructor>;
    try {
      parser = new Busboy({ headers: pending.headers as never, limits });
    } catch {
      // Nothing can be parsed: the body is read and dropped so the connection stays usable.
      pending.stream.resume();
      throw new GatewayError('invalid_request', 'The multipart/form-data body has no boundary in its Content-Type.');
    }
    parser.on('file', (fieldname: string, file: Readable, filename: string, _encoding: string, mimeType: string) => {
      // The array form `image[]` (sent by some SDKs) names the same field.
      const name = fieldname.replace(/\[\]$/, '');
      // A file the endpoint does not read, or a second one where it reads one, is refused before
      // it is buffered: dropping it silently would answer as if it had been used.
      const refusal = !fileFields.includes(name)
        ? `This endpoint takes no '${name}' file (it reads ${fileFields.length ? fileFields.map((field) => `'${field}'`).join(', ') : 'none'}).`
        : seen.has(name)
          ? `Only one '${name}' file is accepted.`
          : undefined;
      seen.add(name);
      if (refusal) {
        file.resume();
        fail(new GatewayError('invalid_request', refusal, { param: name }));
        return;
      }
      openFiles += 1;
      const chunks: Buffer[] = [];
      file.on('data', (chunk: Buffer) => chunks.push(chunk));
      file.on('limit', () => fail(new GatewayError('payload_too_large', TOO_LARGE)));
      file.on('error', () => fail(new GatewayError('invalid_request', MALFORMED)));
      file.on('end', () => {
        openFiles -= 1;
        files[name] = { bytes: Buffer.concat(chunks), filename, contentType: mimeType };
        settleIfDone();
      });
    });
    parser.on('field', (fieldname: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) fail(new GatewayError('payload_too_large', TOO_LARGE));
      else fields[fieldname] = value;
    });
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      parser.on(limit, () => fail(new GatewayError('payload_too_large', TOO_LARGE)));
    }
    parser.on('error', () => fail(new GatewayError('invalid_request', MALFORMED)));
    parser.on('finish', () => {
      finished = true;
      settleIfDone();
    });
    pending.stream.on('error', () => fail(new GatewayError('invalid_request', 'The upload was interrupted.')));
    pending.stream.pipe(parser);
  });
}

const IMAGE_SIGNATURES: Array<{ type: string; test: (bytes: Buffer) => boolean }> = [
  { type: 'image/png', test: (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: 'image/jpeg', test: (bytes) => bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff },
  { type: 'image/webp', test: (bytes) => bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP' },
];

/** The image type from the file's magic bytes, whatever its name or declared type claims. */
export function detectImageType(bytes: Buffer): string | undefined {
  return IMAGE_SIGNATURES.find((signature) => signature.test(bytes))?.type;
}
