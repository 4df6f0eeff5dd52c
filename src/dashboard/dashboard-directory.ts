import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the built dashboard lives: the configured directory, else `dist/dashboard` at the package
 * root, found from this file both when run from source (src/dashboard) and when compiled
 * (dist/src/dashboard). Undefined when nothing is built yet.
 */
export function findDashboardDirectory(configured: string | undefined): string | undefined {
  if (configured) return existsSync(join(configured, 'index.html')) ? resolve(configured) : undefined;
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    const candidate = join(directory, 'dist', 'dashboard');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (existsSync(join(directory, 'package.json'))) return undefined;
    directory = dirname(directory);
  }
  return undefined;
}
