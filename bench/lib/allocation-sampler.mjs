// Preloaded into the gateway by bench/allocation-profile.mjs (node --import): V8's sampling heap
// profiler, switched on and off by SIGUSR2, keeping samples of objects a collection already freed
// (so it counts what was allocated, not what is alive). With GW_ALLOCATION_SURVIVORS=1 objects freed
// by a young-generation collection are dropped instead: what is left outlived the nursery.
// Two forced minor collections before the profile is read free what was only young at that moment.
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

const output = process.env.GW_ALLOCATION_PROFILE_OUT;
const survivorsOnly = process.env.GW_ALLOCATION_SURVIVORS === '1';
const session = new Session();
session.connect();
let sampling = false;

process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !survivorsOnly,
    });
    return;
  }
  sampling = false;
  if (typeof globalThis.gc === 'function') {
    globalThis.gc({ type: 'minor' });
    globalThis.gc({ type: 'minor' });
  }
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error) console.error(`allocation sampler: ${error.message}`);
    else if (output) writeFileSync(output, JSON.stringify(result.profile));
  });
});
