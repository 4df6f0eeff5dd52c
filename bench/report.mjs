#!/usr/bin/env node
// Writes docs/benchmarks.md from one run's results: the machine, the date, the commands, the
// peerbench table with gw in it, the extra scenarios and the issue's targets, all computed.
//
//   node bench/report.mjs --results DIR --root REPO [--out docs/benchmarks.md]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { fmt, median, peerbenchRows, scenarioRows, signed, stealSummary, targetChecks } from './lib/report-figures.mjs';
import { machineTicks, stealPercent } from './lib/processes.mjs';

const options = {};
for (let index = 2; index < process.argv.length; index += 2) options[process.argv[index].replace(/^--/, '')] = process.argv[index + 1];
if (!options.results || !options.root) {
  console.error('usage: report.mjs --results DIR --root REPO [--out FILE]');
  process.exit(2);
}
const readJson = (path) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null);
const peer = readJson(join(options.results, 'peerbench.json'));
const scenarios = readJson(join(options.results, 'scenarios.json'));
const profile = readJson(join(options.results, 'profile-summary.json'));
const commands = existsSync(join(options.results, 'commands.txt')) ? readFileSync(join(options.results, 'commands.txt'), 'utf8').trim() : '';
const outPath = options.out ?? join(options.root, 'docs', 'benchmarks.md');

const git = (args) => {
  try {
    return execFileSync('git', args, { cwd: options.root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
};
// The commit the run built (bench/run.sh writes it at the start); the tree as it is now otherwise.
let recorded;
try {
  recorded = readFileSync(join(options.results, 'source.txt'), 'utf8').trim().split('\n');
} catch {
  recorded = undefined;
}
const commit = recorded ? recorded[0] : git(['rev-parse', '--short', 'HEAD']);
const dirty = (recorded ? recorded[1] === 'dirty' : git(['status', '--porcelain', '--', 'src'])) ? ' (with uncommitted changes in src/)' : '';
const table = (header, rows) => [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

const lines = [];
const now = new Date();
lines.push('# Benchmarks');
lines.push('');
lines.push(`> Written by \`npm run bench\` (bench/report.mjs) on ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC — do not edit by hand; run the benchmark again.`);
lines.push('');
lines.push('gw is measured with everything on: virtual-key auth, rate limits (an enterprise org with raised limits), credit reservation, the cost header, the batched spend ledger and the request log. Only the process log is set to warnings. The org cache default is off so that every answer comes from the upstream (peerbench counts upstream hits); the cache-hit scenario asks for the cache with `gw_cache: true`.');
lines.push('');
lines.push('## Machine');
lines.push('');
const cpuList = cpus();
lines.push(table(['', ''], [
  ['CPU', `${cpuList[0]?.model ?? 'unknown'} × ${cpuList.length}`],
  ['Memory', `${fmt(totalmem() / 2 ** 30, 1)} GiB`],
  ['Kernel', `Linux ${release()}`],
  ['Node', process.version],
  ['gw', `commit ${commit}${dirty}`],
  ['Portkey', peer?.meta?.portkey_version ? `@portkey-ai/gateway ${peer.meta.portkey_version}` : 'not measured'],
  ['Pinning', peer?.meta ? (String(peer.meta.pin) === '1' ? `gateway on cpu ${peer.meta.gw_cpus}, mock + load generators on cpu ${peer.meta.load_cpus}` : 'off') : '–'],
  ['Run', `${peer?.meta?.started_at ?? scenarios?.started_at ?? '–'} → ${scenarios?.ended_at ?? peer?.meta?.ended_at ?? '–'}`],
  ['CPU time taken by the hypervisor (steal)', stealLine()],
]));
lines.push('');
lines.push('Figures are ratios within one run on a shared 2-core machine, not absolute capacity (see ../shared/peerbench/README.md). Steal is the share of all CPUs’ time (/proc/stat) that the virtual CPUs were ready to run but the hypervisor ran something else: where it is more than a few percent, the latency tails of that part of the run (every target’s alike) say more about the host than about the gateways.');
lines.push('');
lines.push('## Commands');
lines.push('');
lines.push('```');
lines.push(commands || 'npm run bench');
lines.push('```');
lines.push('');

lines.push('## Targets (issue 8)');
lines.push('');
lines.push(table(['target', 'measured', 'verdict', 'floor, same run'], targetChecks(peer, scenarios).map((check) => [check.target, check.figure, check.verdict, check.floor ?? '–'])));
lines.push('');
lines.push('The last column is context; the verdicts are judged on gw’s figure alone. Beside the embedded latency targets it is what `bench/bare-node-proxy.mjs` (node:http in front of an undici pool, one JSON parse, nothing else) added over the direct call in the scenario run: the floor under a gateway built on node:http and undici on this machine; and, for whole answers, what `bench/bare-net-proxy.mjs` (the same proxy on node:net alone, no HTTP library) added: the lower floor, under any Node process that reads the request, parses it and makes a second loopback hop. gw reads its clients’ connections and sends its upstream requests with its own code, so it can go below the first; the second is what it can approach. Beside the Postgres + Redis latency targets it is one Redis round trip from the gateway’s CPU (`bench/redis-round-trip.mjs`: PINGs one at a time, as far apart as the scenario’s calls, median over the rounds): the least that checking shared state before the upstream request adds to the embedded figure.');
lines.push('');

lines.push('## peerbench: gw next to the direct call and Portkey');
lines.push('');
if (peer) {
  const rates = String(peer.meta?.rates ?? '500 1000').split(/\s+/).map(Number);
  const rows = peerbenchRows(peer);
  const header = ['target', 'max rps @32 conns', 'vs Portkey', 'CPU µs / request @32', 'max rps @128 conns', ...rates.map((rate) => `p50 / p99 ms @${rate}/s`), ...rates.map((rate) => `added p50 / p99 @${rate}/s`), 'stream first event p50 / p99', 'first event added', 'peak RSS', 'bad'];
  lines.push(table(header, rows.map((row) => [
    row.name === 'direct' ? 'direct (the limit)' : row.name,
    fmt(row.rps32),
    row.vsPortkey === null ? (row.name === 'portkey' ? '1×' : '–') : `${fmt(row.vsPortkey)}×`,
    row.cpuUsPerRequest === null ? '–' : fmt(row.cpuUsPerRequest),
    fmt(row.rps128),
    ...rates.map((rate) => {
      const fixed = row.fixed?.[rate];
      return fixed ? `${fmt(fixed.p50_ms)} / ${fmt(fixed.p99_ms)}${fixed.saturated ? ' SAT' : fixed.near_saturation ? ' *' : ''}` : '–';
    }),
    ...rates.map((rate) => (row.added?.[rate] ? `${signed(row.added[rate].p50_ms)} / ${signed(row.added[rate].p99_ms)} ms` : '—')),
    `${fmt(row.firstEventP50)} / ${fmt(row.firstEventP99)} ms`,
    row.firstEventAdded === null ? '—' : `${signed(row.firstEventAdded)} ms`,
    row.rssPeakMb === null ? '–' : `${fmt(row.rssPeakMb)} MB${row.isMock ? ' (mock)' : ''}`,
    String(row.bad),
  ])));
  lines.push('');
  lines.push(`${peer.meta?.repeats ?? '?'} rounds, medians; ${peer.meta?.dur_s ?? '?'} s per measurement. max rps = wrk closed loop; CPU µs / request = the gateway's CPU time (utime + stime, whole process) over the requests it answered at 32 conns; p50/p99 = open-loop fixed rate (loadgen.mjs), send → full answer; added = gateway − direct in the same round, median over rounds; SAT = answers fell below 95% of the offered rate; * = gateway core ≥ 85% busy. Stream: ${peer.meta?.stream_conc ?? '?'} concurrent streams of ${peer.meta?.mock_chunks ?? '?'} chunks ${peer.meta?.mock_chunk_delay_ms ?? '?'} ms apart.`);
  if (peer.calibration?.mock_rps) lines.push(`Mock capacity alone: ${fmt(peer.calibration.mock_rps)} req/s.`);
  lines.push(`Result: ${peer.valid ? 'VALID (no errors, no non-2xx, every answer the mock’s)' : 'INVALID'}.`);
  if (peer.warnings?.length) {
    lines.push('');
    for (const warning of peer.warnings) lines.push(`- ${warning}`);
  }
} else {
  lines.push('peerbench did not produce results in this run.');
}
lines.push('');

lines.push('## Extra scenarios (each against the direct call, same run)');
lines.push('');
const describe = { 'chat@500': 'chat, 500 req/s', 'chat@2000': 'chat, 2,000 req/s', 'thr@32': 'chat, max throughput, 32 conns', 'embeddings@500': 'embeddings, 500 req/s', stream: 'streamed chat, first event' };
const variant = { gw: '', 'gw-cache-hit': ' — cache hit', 'gw-guardrail': ' — PII guardrail (pre-call)', 'node-floor': ' — bare Node proxy, the floor (bench/bare-node-proxy.mjs: no framework, no governance)', 'net-floor': ' — bare node:net proxy, the lower floor (bench/bare-net-proxy.mjs: no HTTP library, no governance)' };
for (const [name, mode] of Object.entries(scenarios?.modes ?? {})) {
  lines.push(`### ${mode.label ?? name}`);
  lines.push('');
  if (mode.skipped) {
    lines.push(`Skipped: ${mode.skipped}`);
    lines.push('');
    continue;
  }
  const modeRows = scenarioRows(mode);
  const rows = modeRows.map((row) => {
    const scenario = `${describe[row.group] ?? row.group}${variant[row.name] ?? ` — ${row.name}`}`;
    if (row.kind === 'thr') {
      const cpu = `${fmt(row.gwCpuPct)}${row.cpuUsPerRequest ? ` (${fmt(row.cpuUsPerRequest)} µs / request)` : ''}`;
      return [scenario, `${fmt(row.rps)} req/s`, `${fmt(row.directRps)} req/s`, `${fmt(row.ratioToDirect)}× of direct`, cpu, String(row.bad)];
    }
    const flag = row.kind === 'rate' && row.saturated ? ' SAT' : '';
    const own = `${fmt(row.p50)} / ${fmt(row.p99)} ms${flag}`;
    const direct = `${fmt(row.direct_p50)} / ${fmt(row.direct_p99)} ms`;
    return [scenario, own, direct, `${signed(row.added_p50)} / ${signed(row.added_p99)} ms`, fmt(row.gwCpuPct), String(row.bad)];
  });
  lines.push(table(['scenario', 'gw p50 / p99 (or rps)', 'direct', 'added p50 / p99', 'gw cpu %', 'bad'], rows));
  lines.push('');
  lines.push(`Peak RSS (VmHWM) of the gateway: ${fmt(mode.rssPeakKb / 1024)} MB (idle after warm-up ${fmt(mode.rssIdleKb / 1024)} MB, at the end ${fmt(mode.rssEndKb / 1024)} MB).`);
  const serverCpu = modeRows.find((row) => row.kind === 'thr' && row.name === 'gw')?.servicesCpuUsPerRequest;
  if (serverCpu) lines.push(`- CPU of the shared servers per request at max throughput (32 conns), besides the gateway's own: ${Object.entries(serverCpu).map(([name, us]) => `${name} ${fmt(us)} µs`).join(', ')} (they share the machine's CPUs with the gateway and the load).`);
  const steal = stealSummary(mode.records);
  if (steal) lines.push(`- CPU time taken by the hypervisor during these measurements: median ${fmt(steal.medianPct)}%, highest ${fmt(steal.maxPct)}% (${describe[steal.at.group] ?? steal.at.group}${variant[steal.at.name] ?? ` — ${steal.at.name}`}, round ${steal.at.round}).`);
  for (const note of mode.notes ?? []) lines.push(`- ${note}`);
  if (mode.soak) lines.push(`- Soak: ${mode.soak.durationS} s at 500 req/s, RSS samples (MB): ${mode.soak.samples.map((sample) => fmt(sample.rss_kb / 1024)).join(', ')}; bad ${mode.soak.bad}.`);
  lines.push('');
}
if (!scenarios) lines.push('The scenarios did not produce results in this run.\n');
if (scenarios) lines.push(`Settings: ${scenarios.settings.repeats} rounds, ${scenarios.settings.durationS} s per measurement (streams ${scenarios.settings.streamDurationS} s, ${scenarios.settings.streamConcurrency} concurrent), medians; added = gw − direct within the round. Postgres mode uses a fresh schema and Redis db 15 (flushed). Both modes' gateways run side by side and their measurements alternate group by group (the mode measured first alternates by round); the Postgres + Redis throughput and CPU ratios are medians of the rounds' paired ratios.${quietNote(scenarios)}\n`);

if (profile) {
  lines.push('## Profile of the request path');
  lines.push('');
  lines.push(`\`node --cpu-prof\` under ${profile.load}, on the unbundled build (dist/src/, so that every function is named by its file and line; the figures above are the server bundle's); ${fmt(profile.summary.totalMs)} ms sampled. Top functions by self time:`);
  lines.push('');
  lines.push(table(['self %', 'function'], profile.summary.functions.slice(0, 20).map((entry) => [`${fmt(entry.pct, 1)}`, `\`${entry.name}\``])));
  lines.push('');
  if (profile.gc) lines.push(`GC (\`--trace-gc\`): ${profile.gc.scavenges} scavenges (median ${fmt(profile.gc.scavengeMedianMs)} ms, max ${fmt(profile.gc.scavengeMaxMs)} ms), ${profile.gc.markCompacts} mark-compacts (max ${fmt(profile.gc.markCompactMaxMs)} ms) over ${fmt(profile.gc.seconds)} s of load.`);
  lines.push('');
}
void median;
writeFileSync(outPath, `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trim()}\n`);
console.error(`report: wrote ${outPath}`);

/** Steal over the peerbench part (bench/run.sh saves /proc/stat before and after it) and over the scenario measurements. */
function stealLine() {
  const parts = [];
  const saved = join(options.results, 'peerbench-stat.txt');
  const stat = existsSync(saved) ? readFileSync(saved, 'utf8').trim().split('\n') : [];
  const peerSteal = stat.length === 2 ? stealPercent(machineTicks(stat[0]), machineTicks(stat[1])) : null;
  if (peerSteal !== null) parts.push(`peerbench ${fmt(peerSteal)}%`);
  const records = Object.values(scenarios?.modes ?? {}).flatMap((mode) => mode.records ?? []);
  const steal = stealSummary(records);
  if (steal) parts.push(`scenario measurements median ${fmt(steal.medianPct)}%, highest ${fmt(steal.maxPct)}%`);
  return parts.length ? parts.join('; ') : 'not recorded';
}

/** How the run waited for a quiet machine before each scenario measurement (bench/lib/processes.mjs, waitForQuiet). */
function quietNote(scenarios) {
  const { quietBusy, quietMaxS } = scenarios.settings;
  if (quietBusy === undefined) return '';
  const records = Object.values(scenarios.modes).flatMap((mode) => mode.records ?? []);
  const notQuiet = records.filter((record) => record.quiet && !record.quiet.quiet).length;
  return ` Before each measurement the run waited until under ${Math.round(quietBusy * 100)}% of all CPUs were busy over 250 ms (at most ${quietMaxS} s)${notQuiet ? `; ${notQuiet} of ${records.length} measurements started on a machine that stayed busier` : ''}.`;
}
