import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import type { UploadedFile } from '../pipeline/stage.js';

export interface MultipartBody {
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
}

/**
 * Reads a multipart/form-data body fully (files are small enough for memory within the documented
 * GW_FILE_LIMIT_BYTES; past it @fastify/multipart throws and the client gets 413).
 */
export async function readMultipartBody(request: FastifyRequest): Promise<MultipartBody> {
  if (!request.isMultipart()) {
    throw new GatewayError('invalid_request', 'This endpoint takes multipart/form-data.');
  }
  const fields: Record<string, string> = {};
  const files: Record<string, UploadedFile> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const bytes = await part.toBuffer();
      // The array form `image[]` (sent by some SDKs) is read as the first file.
      const name = part.fieldname.replace(/\[\]$/, '');
      if (!files[name]) files[name] = { bytes, filename: part.filename, contentType: part.mimetype };
    } else {
      fields[part.fieldname] = String(part.value);
    }
  }
  return { fields, files };
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
