// Preloaded into the gateway by bench/call-timeline.mjs (node --import). Records when each step of
// a call happened, in ms after the gateway saw the request: the gateway's own steps from the
// `gw:call:step` diagnostics channel (src/observability/call-steps.ts), undici's channels for the
// upstream request, the first write to Redis / Postgres and Redis's first reply, and the first and
// last write of the answer. Calls must come one at a time:
// every step is credited to the latest request. SIGUSR2 writes the calls recorded so far to
// GW_CALL_TIMELINE_OUT (JSON) and starts over.
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { isMainThread } from 'node:worker_threads';
import { Socket } from 'node:net';

const UPSTREAM_STEPS = {
  'undici:request:create': 'upstream request created',
  'undici:client:sendHeaders': 'upstream request headers written',
  'undici:request:bodySent': 'upstream request body written',
  'undici:request:headers': 'upstream answer headers',
  'undici:request:bodyChunkReceived': 'upstream answer first body bytes',
};

/** The port of a store's URL (its default when the URL names none); undefined without a URL. */
function storePort(url, fallback) {
  if (!url) return undefined;
  try {
    return Number(new URL(url).port) || fallback;
  } catch {
    return undefined;
  }
}

if (isMainThread) {
  const output = process.env.GW_CALL_TIMELINE_OUT;
  let calls = [];
  let current;
  let startedAt = 0;
  const mark = (step, at = performance.now()) => {
    if (current !== undefined && current[step] === undefined) current[step] = Number((at - startedAt).toFixed(4));
  };
  // node:http publishes the requests it parses; gw's HTTP edge (src/http/edge/http-edge.ts) those it serves itself.
  const onRequestStart = (at = performance.now()) => {
    startedAt = at;
    current = {};
    calls.push(current);
  };
  subscribe('http.server.request.start', () => onRequestStart());
  subscribe('gw:http:request:start', ({ at }) => onRequestStart(at));
  subscribe('gw:call:step', (message) => mark(message.step, message.at));
  // Answers read whole go through gw's own HTTP/1.1 client, which publishes the same moments
  // under gw:upstream:* (src/providers/http/http1-client.ts); streams go through undici.
  for (const [channel, step] of Object.entries(UPSTREAM_STEPS)) {
    subscribe(channel, () => mark(step));
    subscribe(channel.replace(/^undici:/, 'gw:upstream:'), () => mark(step));
  }
  // The shared stores' traffic during the call: when its first write to Redis (and Postgres) left
  // and when Redis first answered, so a round trip on the call's path shows in the timeline.
  const redisPort = storePort(process.env.GW_REDIS_URL, 6379);
  const postgresPort = process.env.GW_DATABASE_URL?.startsWith('postgres') ? storePort(process.env.GW_DATABASE_URL, 5432) : undefined;
  for (const name of ['_writeGeneric', '_writev']) {
    const original = Socket.prototype[name];
    Socket.prototype[name] = function (...args) {
      if (this.remotePort === redisPort) mark('redis write');
      else if (this.remotePort === postgresPort) mark('postgres write');
      return original.apply(this, args);
    };
  }
  const emit = Socket.prototype.emit;
  Socket.prototype.emit = function (event, ...args) {
    if (event === 'data' && this.remotePort === redisPort) mark('redis reply');
    return emit.call(this, event, ...args);
  };
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
