#!/usr/bin/env node
// One Redis round trip on this machine, the least a call that checks a shared store before its
// upstream request can cost: PINGs on one connection, one at a time and GAP ms apart (2 ms: the
// spacing of calls at 500 req/s, so Redis and this process fall idle between them as they do
// under that load). Printed as percentiles in ms, or JSON with --json. Run it on the gateway's CPU
// (`taskset -c 0 node bench/redis-round-trip.mjs`) to see what the gateway would see.
//
//   node bench/redis-round-trip.mjs [--url redis://127.0.0.1:6379] [--count 2000] [--gap-ms 2] [--json]
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from './lib/call-spans-summary.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(`--${name}`);
  return index >= 0 && argv[index + 1] !== undefined ? argv[index + 1] : fallback;
};
const url = new URL(option('url', process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'));
const count = Number(option('count', 2000));
const gapMs = Number(option('gap-ms', 2));
if (url.protocol !== 'redis:' || !(Number.isInteger(count) && count >= 10 && count <= 1_000_000) || !(gapMs >= 0 && gapMs <= 1000)) {
  console.error('usage: redis-round-trip.mjs [--url redis://HOST:PORT] [--count 10-1000000] [--gap-ms 0-1000] [--json]');
  process.exit(2);
}

const PING = Buffer.from('*1\r\n$4\r\nPING\r\n');
const PONG = '+PONG\r\n';

async function main() {
  const socket = net.connect(Number(url.port || 6379), url.hostname);
  socket.setNoDelay(true);
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  // One reply is awaited at a time; a reply split across reads is put back together.
  let pending;
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
    if (received.length < PONG.length) return;
    if (!received.startsWith(PONG)) {
      pending?.reject(new Error(`Redis answered ${JSON.stringify(received.slice(0, 80))} to PING`));
      return;
    }
    received = received.slice(PONG.length);
    pending?.resolve();
  });
  socket.on('error', (error) => pending?.reject(error));
  const ping = () =>
    new Promise((resolve, reject) => {
      pending = { resolve, reject };
      socket.write(PING);
    });

  // A few unmeasured ones first: the connection and both processes' code paths warm.
  for (let index = 0; index < 20; index++) await ping();
  const samples = [];
  for (let index = 0; index < count; index++) {
    if (gapMs > 0) await sleep(gapMs);
    const startedAt = process.hrtime.bigint();
    await ping();
    samples.push(Number(process.hrtime.bigint() - startedAt) / 1e6);
  }
  socket.destroy();
  samples.sort((a, b) => a - b);
  const round = (value) => Number(value.toFixed(4));
  const result = {
    count,
    gap_ms: gapMs,
    rtt_ms: { p50: round(percentile(samples, 50)), p90: round(percentile(samples, 90)), p99: round(percentile(samples, 99)), max: round(samples[samples.length - 1]) },
  };
  if (argv.includes('--json')) console.log(JSON.stringify(result));
  else console.log(`Redis round trip (PING, ${count} one at a time, ${gapMs} ms apart): p50 ${result.rtt_ms.p50} p90 ${result.rtt_ms.p90} p99 ${result.rtt_ms.p99} max ${result.rtt_ms.max} ms`);
}

main().catch((error) => {
  console.error(`redis-round-trip FAILED: ${error.message}`);
  process.exitCode = 1;
});
