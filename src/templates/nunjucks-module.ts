import { createRequire } from 'node:module';
import type Nunjucks from 'nunjucks';

let loaded: typeof Nunjucks | undefined;
const requireHere = createRequire(import.meta.url);

/**
 * nunjucks, loaded on the first template checked or rendered: most gateways never render one, and
 * the module holds ~0.7 MB of the JavaScript heap (about 1 MB of peak memory with the heap's
 * headroom) in every process that imports it.
 */
export function nunjucksModule(): typeof Nunjucks {
  loaded ??= requireHere('nunjucks') as typeof Nunjucks;
  return loaded;
}

/** The step between parsing and compiling that nunjucks' own compile() runs (not re-exported by its index). */
export function nunjucksTransformer(): { transform(root: unknown, asyncFilters: string[], name?: string): unknown } {
  nunjucksModule();
  return requireHere('nunjucks/src/transformer') as { transform(root: unknown, asyncFilters: string[], name?: string): unknown };
}
