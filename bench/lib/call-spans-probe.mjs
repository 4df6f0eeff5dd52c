// Preloaded into the gateway by `bench/call-timeline.mjs --rate N` (node --import). Under an
// open-loop load, where calls overlap, it records four moments of every call: the gateway saw the
// request, it created the upstream request, the client handed that request to its socket (both
// clients publish `client:sendHeaders` just before the write), the upstream's answer headers
// arrived, and the answer to the client finished. An upstream request is credited
// to its call through AsyncLocalStorage: the store is entered when the request starts, on the
// connection's own async context, and the call's continuations carry it to undici's
// `undici:request:create` channel. SIGUSR2 writes the completed calls to GW_CALL_SPANS_OUT (JSON)
// and starts over.
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const output = process.env.GW_CALL_SPANS_OUT;
  const currentCall = new AsyncLocalStorage();
  const byUpstreamRequest = new Map();
  let calls = [];
  let unmatched = 0;
  // node:http publishes the requests it parses; gw's HTTP edge (src/http/edge/http-edge.ts) those it serves itself.
  const onRequestStart = (response, at = performance.now()) => {
    const call = { seen: at };
    currentCall.enterWith(call);
    response.once('finish', () => {
      call.finished = performance.now();
      calls.push(call);
    });
  };
  subscribe('http.server.request.start', ({ response }) => onRequestStart(response));
  subscribe('gw:http:request:start', ({ answer, at }) => onRequestStart(answer, at));
  // Answers read whole go through gw's own HTTP/1.1 client, which publishes the same moments
  // under gw:upstream:* (src/providers/http/http1-client.ts); streams go through undici.
  for (const prefix of ['undici:', 'gw:upstream:']) {
    subscribe(`${prefix}request:create`, ({ request }) => {
      const call = currentCall.getStore();
      // A retry or fallback makes a second upstream request: the call keeps its first.
      if (call === undefined || call.created !== undefined) {
        unmatched++;
        return;
      }
      call.created = performance.now();
      byUpstreamRequest.set(request, call);
    });
    subscribe(`${prefix}client:sendHeaders`, ({ request }) => {
      const call = byUpstreamRequest.get(request);
      if (call !== undefined) call.written = performance.now();
    });
    subscribe(`${prefix}request:headers`, ({ request }) => {
      const call = byUpstreamRequest.get(request);
      if (call === undefined) return;
      call.answered = performance.now();
      byUpstreamRequest.delete(request);
    });
    subscribe(`${prefix}request:error`, ({ request }) => byUpstreamRequest.delete(request));
  }
  process.on('SIGUSR2', () => {
    if (output) writeFileSync(output, JSON.stringify({ calls, unmatched }));
    calls = [];
    unmatched = 0;
  });
}
