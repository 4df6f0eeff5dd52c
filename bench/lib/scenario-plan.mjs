// The extra scenarios peerbench does not cover. Each group is measured back to back for the
// direct call and for every gateway variant in one round; the report pairs each variant with
// the direct call of the same group and round.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Text every chat answer of peerbench's mock carries: an answer without it did not come from the mock. */
export const MARKER = 'peerbench-mock';
/** The mock's embedding answer has no marker text; its object type proves it came from the mock. */
export const EMBEDDING_MARKER = '"object":"embedding"';

/** Bodies derived from peerbench's chat body: the same request asking for the cache, or naming the guardrail. */
export function writeVariantBodies({ peerDir, resultsDir, guardrailId, mode }) {
  const chat = JSON.parse(readFileSync(join(peerDir, 'bodies', 'chat.json'), 'utf8'));
  // One set per storage mode: both modes' gateways are up at once, each with its own guardrail id.
  const cacheBody = join(resultsDir, `chat-cache-${mode}.json`);
  writeFileSync(cacheBody, JSON.stringify({ ...chat, gw_cache: true }));
  let guardrailBody = null;
  if (guardrailId) {
    guardrailBody = join(resultsDir, `chat-guardrail-${mode}.json`);
    writeFileSync(guardrailBody, JSON.stringify({ ...chat, gw_guardrail_ids: [guardrailId] }));
  }
  return { cacheBody, guardrailBody };
}

/**
 * Groups of measurements for one storage mode.
 * context: { mode, peerDir, benchDir, mockPort, gwPort, apiKey, bodies, probes, streamConcurrency, minEvents, floorPort, netFloorPort }
 * floorPort: where bench/bare-node-proxy.mjs listens (embedded mode only), measured as `node-floor`;
 * netFloorPort: where bench/bare-net-proxy.mjs listens, measured as `net-floor` (chat at 500 req/s
 * only: it answers whole bodies, not streams).
 * probes: { cache: boolean, guardrail: boolean } (from the probe requests before load).
 */
export function scenarioGroups(context) {
  const { mode, peerDir, benchDir, mockPort, gwPort, apiKey, bodies, probes, streamConcurrency, minEvents, floorPort, netFloorPort } = context;
  const direct = { url: `http://127.0.0.1:${mockPort}`, headers: 'Authorization: Bearer peerbench' };
  const gateway = { url: `http://127.0.0.1:${gwPort}`, headers: `Authorization: Bearer ${apiKey}` };
  const chatBody = join(peerDir, 'bodies', 'chat.json');
  const streamBody = join(peerDir, 'bodies', 'chat-stream.json');
  const embeddingBody = join(benchDir, 'bodies', 'embeddings.json');
  const entry = (name, target, spec) => ({ name, spec: { ...spec, url: `${target.url}${spec.path}`, headers: target.headers } });
  const chatRate = (rate) => ({ kind: 'rate', path: '/v1/chat/completions', bodyFile: chatBody, marker: MARKER, rate });

  const chat500 = [entry('direct', direct, chatRate(500)), entry('gw', gateway, chatRate(500))];
  const full = mode === 'sqlite';
  const floor = full && floorPort ? { url: `http://127.0.0.1:${floorPort}`, headers: '' } : null;
  if (floor) chat500.push(entry('node-floor', floor, chatRate(500)));
  if (full && netFloorPort) chat500.push(entry('net-floor', { url: `http://127.0.0.1:${netFloorPort}`, headers: '' }, chatRate(500)));
  if (full && probes.cache) chat500.push(entry('gw-cache-hit', gateway, { ...chatRate(500), bodyFile: bodies.cacheBody }));
  if (full && probes.guardrail) chat500.push(entry('gw-guardrail', gateway, { ...chatRate(500), bodyFile: bodies.guardrailBody }));

  const groups = [
    { id: 'chat@500', entries: chat500 },
    { id: 'chat@2000', entries: [entry('direct', direct, chatRate(2000)), entry('gw', gateway, chatRate(2000))] },
    {
      id: 'thr@32',
      entries: ['direct', 'gw'].map((name) =>
        entry(name, name === 'direct' ? direct : gateway, { kind: 'thr', path: '/v1/chat/completions', bodyFile: chatBody, conns: 32 }),
      ),
    },
  ];
  if (full) {
    const embedding = { kind: 'rate', path: '/v1/embeddings', bodyFile: embeddingBody, marker: EMBEDDING_MARKER, rate: 500 };
    groups.push({ id: 'embeddings@500', entries: [entry('direct', direct, embedding), entry('gw', gateway, embedding)] });
  }
  const stream = { kind: 'stream', path: '/v1/chat/completions', bodyFile: streamBody, marker: MARKER, concurrency: streamConcurrency, minEvents };
  const streams = [entry('direct', direct, stream), entry('gw', gateway, stream)];
  if (floor) streams.push(entry('node-floor', floor, stream));
  groups.push({ id: 'stream', entries: streams });
  return groups;
}

/** One request through the gateway with a body file; returns status and headers. */
export async function probe(gwPort, apiKey, bodyFile) {
  const response = await fetch(`http://127.0.0.1:${gwPort}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: readFileSync(bodyFile),
  });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), marker: text.includes(MARKER), text: text.slice(0, 300) };
}
