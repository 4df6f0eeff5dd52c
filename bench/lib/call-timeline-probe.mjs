// Preloaded into the gateway by bench/call-timeline.mjs (node --import). Records when each step of
// a call happened, in ms after the gateway saw the request: the gateway's own steps from the
// `gw:call:step` diagnostics channel (src/observability/call-steps.ts), undici's channels for the
// upstream request, and the first and last write of the answer. Calls must come one at a time:
// every step is credited to the latest request. SIGUSR2 writes the calls recorded so far to
// GW_CALL_TIMELINE_OUT (JSON) and starts over.
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { isMainThread } from 'node:worker_threads';

const UPSTREAM_STEPS = {
  'undici:request:create': 'upstream request created',
  'undici:client:sendHeaders': 'upstream request headers written',
  'undici:request:bodySent': 'upstream request body written',
  'undici:request:headers': 'upstream answer headers',
  'undici:request:bodyChunkReceived': 'upstream answer first body bytes',
};

if (isMainThread) {
  const output = process.env.GW_CALL_TIMELINE_OUT;
  let calls = [];
  let current;
  let startedAt = 0;
  const mark = (step, at = performance.now()) => {
    if (current !== undefined && current[step] === undefined) current[step] = Number((at - startedAt).toFixed(4));
  };
  subscribe('http.server.request.start', () => {
    startedAt = performance.now();
    current = {};
    calls.push(current);
  });
  subscribe('gw:call:step', (message) => mark(message.step, message.at));
  for (const [channel, step] of Object.entries(UPSTREAM_STEPS)) subscribe(channel, () => mark(step));
  const write = ServerResponse.prototype.write;
  ServerResponse.prototype.write = function (...args) {
    mark('first write to the client');
    return write.apply(this, args);
  };
  const end = ServerResponse.prototype.end;
  ServerResponse.prototype.end = function (...args) {
    mark('first write to the client');
    mark('answer ended');
    return end.apply(this, args);
  };
  process.on('SIGUSR2', () => {
    if (output) writeFileSync(output, JSON.stringify(calls));
    calls = [];
    current = undefined;
  });
}
