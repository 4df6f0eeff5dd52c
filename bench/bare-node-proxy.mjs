#!/usr/bin/env node
// The floor under a gateway built on node:http and undici: node:http in front of an undici Pool, one
// JSON parse of each body and nothing else (no framework, no auth, no metering). Measuring it
// the way peerbench measures gw shows how much of gw's added latency is Node's own.
//
//   taskset -c 0 node bench/bare-node-proxy.mjs --port 18990 --upstream http://127.0.0.1:18080 --seconds 60 &
//   taskset -c 1 node ../shared/peerbench/loadgen.mjs rate --url http://127.0.0.1:18990/v1/chat/completions \
//     --body-file ../shared/peerbench/bodies/chat.json --rate 500 --duration 8
//
// Listens on 127.0.0.1 only, forwards to a loopback upstream only, and exits after --seconds.
// `npm run bench` measures it next to gw in the extra scenarios (the "bare Node proxy" rows).
import http from 'node:http';
import { Pool } from 'undici';

const options = { port: '18990', upstream: 'http://127.0.0.1:18080', seconds: '60' };
for (let index = 2; index < process.argv.length; index += 2) options[process.argv[index].replace(/^--/, '')] = process.argv[index + 1];
const upstream = new URL(options.upstream);
if (!['127.0.0.1', 'localhost'].includes(upstream.hostname)) {
  console.error(`refusing a non-loopback upstream: ${upstream.hostname}`);
  process.exit(2);
}
const pool = new Pool(upstream.origin, { connections: 256 });

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', async () => {
    try {
      const body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      const answer = await pool.request({ path: request.url, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bare-proxy' }, body });
      const type = String(answer.headers['content-type'] ?? 'application/json');
      if (type.includes('text/event-stream')) {
        // Streams pass through chunk by chunk, as a gateway must forward them.
        response.writeHead(answer.statusCode, { 'content-type': type, 'cache-control': 'no-cache' });
        for await (const chunk of answer.body) response.write(chunk);
        response.end();
        return;
      }
      const bytes = Buffer.from(await answer.body.arrayBuffer());
      if (String(answer.headers['content-type'] ?? '').includes('json')) JSON.parse(bytes.toString('utf8'));
      response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json'), 'content-length': bytes.length });
      response.end(bytes);
    } catch (error) {
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'upstream_error', code: 'bad_gateway' } }));
    }
  });
});
server.listen(Number(options.port), '127.0.0.1', () => console.error(`bare proxy on 127.0.0.1:${options.port} → ${upstream.origin} for ${options.seconds} s`));
setTimeout(() => {
  server.close();
  void pool.close();
  process.exit(0);
}, Number(options.seconds) * 1000).unref();
