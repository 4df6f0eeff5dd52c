// Preloaded into the gateway by `bench/async-resources.mjs` (node --import): counts the async
// resources the main thread creates (promises, timers, nextTick callbacks, immediates, I/O
// handles) by type, through an async_hooks init hook. With GW_ASYNC_RESOURCES_SITES=1 it also
// notes, for every 8th resource, the first frame outside Node's own code that created it (its file,
// without line and column), counted times 8. SIGUSR2 writes { counts, sites } to
// GW_ASYNC_RESOURCES_OUT and starts over. The hook itself slows every call: read the counts, not
// the latency, of a window measured with it.
import { createHook } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const SITE_SAMPLING = 8;

if (isMainThread) {
  const output = process.env.GW_ASYNC_RESOURCES_OUT;
  const withSites = process.env.GW_ASYNC_RESOURCES_SITES === '1';
  let counts = Object.create(null);
  let sites = Object.create(null);
  let seen = 0;
  const creatorOf = () => {
    const holder = {};
    Error.captureStackTrace(holder);
    for (const line of holder.stack.split('\n').slice(1)) {
      const frame = line.trim();
      if (frame.includes('node:') || frame.includes('async-resources-probe')) continue;
      const location = frame.match(/\(?((?:file:\/\/)?\/[^():]+)(?::\d+){0,2}\)?$/);
      return location ? location[1].replace(/^file:\/\//, '') : frame;
    }
    return "Node's own code";
  };
  createHook({
    init(_id, type) {
      counts[type] = (counts[type] ?? 0) + 1;
      if (withSites && ++seen % SITE_SAMPLING === 0) {
        const key = `${type} ${creatorOf()}`;
        sites[key] = (sites[key] ?? 0) + SITE_SAMPLING;
      }
    },
  }).enable();
  process.on('SIGUSR2', () => {
    if (output) writeFileSync(output, JSON.stringify({ counts, sites }));
    counts = Object.create(null);
    sites = Object.create(null);
  });
}
