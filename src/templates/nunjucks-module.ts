import { createRequire } from 'node:module';
import type Nunjucks from 'nunjucks';

let loaded: typeof Nunjucks | undefined;

/**
 * nunjucks, loaded on the first template checked or rendered: most gateways never render one, and
 * the module holds ~0.7 MB of the JavaScript heap (about 1 MB of peak memory with the heap's
 * headroom) in every process that imports it.
 */
export function nunjucksModule(): typeof Nunjucks {
  loaded ??= createRequire(import.meta.url)('nunjucks') as typeof Nunjucks;
  return loaded;
}
