import { createHash } from 'node:crypto';

export interface MultipartFile {
  bytes: Buffer | Uint8Array;
  filename: string;
  contentType: string;
}

export type MultipartPart = { name: string; value: string } | { name: string; file: MultipartFile };

/** A boundary derived from a seed (the request id), so the same request always gives the same bytes. */
export function multipartBoundary(seed: string): string {
  return `----gw-${createHash('sha256').update(seed).digest('hex').slice(0, 32)}`;
}

function quoted(value: string): string {
  // RFC 7578 §4.2: field names and filenames are quoted strings; escape quotes and drop line breaks.
  return value.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
}

/** multipart/form-data (RFC 7578) from ordered parts. */
export function buildMultipartBody(parts: readonly MultipartPart[], boundary: string): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('file' in part) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"; filename="${quoted(part.file.filename)}"\r\n` +
            `Content-Type: ${part.file.contentType}\r\n\r\n`,
        ),
        Buffer.from(part.file.bytes),
        Buffer.from('\r\n'),
      );
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(part.name)}"\r\n\r\n${part.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
