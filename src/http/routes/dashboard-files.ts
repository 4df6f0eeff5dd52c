import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

/**
 * The dashboard's built files, read once at start and served from memory: a few dozen kilobytes
 * (index.html, one script, one stylesheet). A general static-file plugin and its dependencies took
 * ~1.7 MB of the JavaScript heap in every gateway for that, about 2.5 MB of peak memory with the
 * heap's headroom. Files added after start are not served, as before.
 */
export interface DashboardFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

/** The largest directory read into memory; a bigger GW_DASHBOARD_DIR is refused at start. */
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

/** Every file under `directory`, keyed by its URL path relative to it (`assets/index-abc.js`). */
export function readDashboardFiles(directory: string, maxTotalBytes = MAX_TOTAL_BYTES): Map<string, DashboardFile> {
  const files = new Map<string, DashboardFile>();
  let total = 0;
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      if (!entry.isFile()) continue;
      total += statSync(path).size;
      if (total > maxTotalBytes) {
        throw new Error(`The dashboard directory ${directory} holds more than ${maxTotalBytes} bytes; it is served from memory, so point GW_DASHBOARD_DIR at the built dashboard only.`);
      }
      const body = readFileSync(path);
      files.set(relative(directory, path).split(sep).join('/'), {
        body,
        contentType: CONTENT_TYPES[extname(entry.name).toLowerCase()] ?? 'application/octet-stream',
        etag: `"${createHash('sha1').update(body).digest('base64url')}"`,
      });
    }
  };
  walk(directory);
  return files;
}
