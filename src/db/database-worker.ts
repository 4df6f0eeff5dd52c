import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts one of this folder's worker modules (`name` without extension). Built, the worker's .js
 * sits beside this file; from the TypeScript sources (tests) it loads through tsx.
 */
export function startDatabaseWorker(name: string, workerData: Record<string, unknown>, resourceLimits?: ResourceLimits): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL(`./${name}.js`, import.meta.url), { workerData, resourceLimits });
  }
  const source = new URL(`./${name}.ts`, import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits });
}
