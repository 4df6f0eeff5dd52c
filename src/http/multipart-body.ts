import type { Readable } from 'node:stream';
import { GatewayError } from '../errors/gateway-error.js';
import type { UploadedFile } from '../pipeline/stage.js';

export interface MultipartBody {
  fields: Record<string, string>;
  /** One file per name; under a repeatable name sent several times, the first with the others in its `more`. */
  files: Record<string, UploadedFile>;
}

export interface MultipartFileRules {
  /** File fields sent more than once are all kept (image edits take several images); any other name takes one. */
  repeatable?: readonly string[];
}

export interface MultipartLimits {
  /** Largest file (GW_FILE_LIMIT_BYTES). */
  fileSize: number;
  /** Most bytes all of a form's files may hold together. */
  formFileBytes: number;
  files: number;
  fields: number;
  /** Largest text field. */
  fieldSize: number;
  parts: number;
}

/** Image edits take up to 16 images (OpenAI's limit for gpt-image-1) and a mask. */
export const MAX_FORM_FILES = 17;
/**
 * A form's files together hold at most 4 × GW_FILE_LIMIT_BYTES (100 MiB by default): a form is
 * buffered in memory, and this bounds it as tightly as the former 4-file limit did while letting
 * an edit send 16 ordinary images.
 */
const FORM_FILE_BYTES_PER_FILE_LIMIT = 4;

export function multipartLimits(fileLimitBytes: number): MultipartLimits {
  return {
    fileSize: fileLimitBytes,
    formFileBytes: fileLimitBytes * FORM_FILE_BYTES_PER_FILE_LIMIT,
    files: MAX_FORM_FILES,
    fields: 32,
    fieldSize: 1024 * 1024,
    parts: 40,
  };
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
const formTooLarge = (limits: MultipartLimits) =>
  `The files of a form may hold at most ${limits.formFileBytes} bytes together (4 × GW_FILE_LIMIT_BYTES).`;
const MALFORMED = 'The multipart/form-data body is malformed.';

/** The count limits get their own message: a client past one has sent too many parts, not too many bytes. */
function tooMany(limits: MultipartLimits, limit: 'partsLimit' | 'filesLimit' | 'fieldsLimit'): string {
  if (limit === 'filesLimit') return `A form may carry at most ${limits.files} files.`;
  if (limit === 'fieldsLimit') return `A form may carry at most ${limits.fields} text fields.`;
  return `A form may carry at most ${limits.parts} parts.`;
}

/** Why a file part is refused before a byte of it is kept, or undefined when the endpoint reads it. */
function fileRefusal(name: string, fileFields: readonly string[], repeatable: readonly string[], alreadySent: boolean): string | undefined {
  if (!fileFields.includes(name)) {
    return `This endpoint takes no '${name}' file (it reads ${fileFields.length ? fileFields.map((field) => `'${field}'`).join(', ') : 'none'}).`;
  }
  if (alreadySent && !repeatable.includes(name)) return `Only one '${name}' file is accepted.`;
  return undefined;
}

/**
 * The files as the endpoint reads them: one per name, a repeated name's others riding on its first.
 * Read once no file is open, so every slot is filled.
 */
function filesByName(received: ReadonlyMap<string, ReadonlyArray<UploadedFile | undefined>>): Record<string, UploadedFile> {
  const files: Record<string, UploadedFile> = {};
  for (const [name, slots] of received) {
    const [first, ...more] = slots as readonly UploadedFile[];
    files[name] = more.length > 0 ? { ...first, more } : first;
  }
  return files;
}

type BusboyConstructor = (typeof import('@fastify/busboy'))['Busboy'];
let busboyModule: Promise<{ Busboy: BusboyConstructor }> | undefined;

/**
 * Reads a multipart/form-data body fully (files are small enough for memory within the documented
 * GW_FILE_LIMIT_BYTES). Only the files named in `fileFields` are kept: any other file part, or a
 * second one under a name that takes one, is a 400 naming it, and the rest of the body is read and
 * dropped unbuffered. Past a limit the client gets 413, and a malformed body 400.
 */
export async function readMultipartBody(
  request: { readonly body: unknown },
  fileFields: readonly string[],
  rules: MultipartFileRules = {},
): Promise<MultipartBody> {
  const pending = request.body;
  if (!(pending instanceof PendingMultipart)) {
    throw new GatewayError('invalid_request', 'This endpoint takes multipart/form-data.');
  }
  const { Busboy } = await (busboyModule ??= import('@fastify/busboy'));
  const { limits } = pending;
  return new Promise<MultipartBody>((resolve, reject) => {
    const fields: Record<string, string> = {};
    // Per name, in the order the parts arrived (a slot is taken when a file starts, filled when it ends).
    const received = new Map<string, Array<UploadedFile | undefined>>();
    let failed = false;
    let openFiles = 0;
    let formFileBytes = 0;
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
      if (!failed && finished && openFiles === 0) resolve({ fields, files: filesByName(received) });
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
      const refusal = fileRefusal(name, fileFields, rules.repeatable ?? [], received.has(name));
      if (refusal) {
        file.resume();
        fail(new GatewayError('invalid_request', refusal, { param: name }));
        return;
      }
      const slots = received.get(name) ?? [];
      received.set(name, slots);
      const slot = slots.push(undefined) - 1;
      openFiles += 1;
      const chunks: Buffer[] = [];
      file.on('data', (chunk: Buffer) => {
        if (failed) return;
        formFileBytes += chunk.length;
        if (formFileBytes > limits.formFileBytes) fail(new GatewayError('payload_too_large', formTooLarge(limits)));
        else chunks.push(chunk);
      });
      file.on('limit', () => fail(new GatewayError('payload_too_large', TOO_LARGE)));
      file.on('error', () => fail(new GatewayError('invalid_request', MALFORMED)));
      file.on('end', () => {
        openFiles -= 1;
        slots[slot] = { bytes: Buffer.concat(chunks), filename, contentType: mimeType };
        settleIfDone();
      });
    });
    parser.on('field', (fieldname: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) fail(new GatewayError('payload_too_large', TOO_LARGE));
      else fields[fieldname] = value;
    });
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      parser.on(limit, () => fail(new GatewayError('payload_too_large', tooMany(limits, limit))));
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
