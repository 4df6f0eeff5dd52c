import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
// @ts-expect-error plain ESM script without type declarations
import { median, pairedRatio, scenarioRows, stealSummary, targetChecks } from './report-figures.mjs';
// @ts-expect-error plain ESM script without type declarations
import { machineTicks, stealPercent } from './processes.mjs';
// @ts-expect-error plain ESM script without type declarations
import { summarizeProfile } from '../summarize-profile.mjs';

type Check = { target: string; figure: string; verdict: string };

const rate = (p50: number, p99: number, achieved: number, target = 500) => ({
  latency_ms: { p50, p99 },
  achieved_rate: achieved,
  target_rate: target,
  invalid: 0,
});

function peer(gwRps: number, added500: { p50_ms: number; p99_ms: number }, firstAdded: number, rssKb: number) {
  const throughput = (rps: number, cpu: number) => ({ 32: { rps, rounds: [{ rps, gw_cpu_pct: cpu }] } });
  return {
    valid: true,
    meta: { rates: '500 1000' },
    targets: {
      direct: { throughput: throughput(30000, 0), fixed_rate: {}, stream: {}, errors_total: 0, info: {} },
      portkey: { throughput: throughput(1000, 100), fixed_rate: {}, stream: {}, errors_total: 0, info: { rss_peak_kb: 200 * 1024 } },
      gw: {
        throughput: throughput(gwRps, 100),
        fixed_rate: {},
        stream: { first_event_p50_ms: 0.9, total_p50_ms: 220 },
        errors_total: 0,
        info: { rss_peak_kb: rssKb },
        overhead_vs_direct: { fixed_rate: { 500: added500 }, stream_first_event_p50_ms: firstAdded },
      },
    },
  };
}

const verdictOf = (checks: Check[], prefix: string) => checks.find((check) => check.target.startsWith(prefix))?.verdict;

describe('benchmark report figures', () => {
  test('median ignores missing values and averages the middle pair', () => {
    assert.equal(median([3, null, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([null, undefined]), null);
  });

  test('added latency is paired with the direct call of the same round, then the median is taken', () => {
    const records = [
      { mode: 'sqlite', group: 'chat@500', name: 'direct', kind: 'rate', round: 1, bad: 0, result: rate(0.2, 1.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'gw', kind: 'rate', round: 1, bad: 0, result: rate(0.5, 2.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'direct', kind: 'rate', round: 2, bad: 0, result: rate(1.2, 9.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'gw', kind: 'rate', round: 2, bad: 0, result: rate(1.4, 10.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'direct', kind: 'rate', round: 3, bad: 0, result: rate(0.3, 1.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'gw', kind: 'rate', round: 3, bad: 0, result: rate(0.6, 1.5, 470) },
    ];
    const [row] = scenarioRows({ records });
    assert.equal(row.name, 'gw');
    assert.ok(Math.abs(row.added_p50 - 0.3) < 1e-9, `added p50 ${row.added_p50}`);
    assert.ok(Math.abs(row.added_p99 - 1.0) < 1e-9, `added p99 ${row.added_p99}`);
    assert.equal(row.saturated, true, 'one round below 95% of the offered rate marks the row saturated');
  });

  test("the shared servers' CPU per request is the median over rounds, by server", () => {
    const thr = (round: number, requests: number, servicesCpuS?: Record<string, number>) => ({
      mode: 'postgres', group: 'thr@32', name: 'gw', kind: 'thr', round, bad: 0, gwCpuS: 1, result: { rps: requests / 8, requests }, servicesCpuS,
    });
    const records = [
      thr(1, 10_000, { 'redis-server': 0.5, postgres: 0.2 }),
      thr(2, 20_000, { 'redis-server': 0.6, postgres: 0.6 }),
      thr(3, 10_000, { 'redis-server': 0.1, postgres: 0.3 }),
    ];
    const [row] = scenarioRows({ records });
    assert.deepEqual(row.servicesCpuUsPerRequest, { 'redis-server': 30, postgres: 30 });
    const [embedded] = scenarioRows({ records: records.map((record) => ({ ...record, servicesCpuS: undefined })) });
    assert.equal(embedded.servicesCpuUsPerRequest, undefined, 'nothing is reported where nothing was measured');
  });

  test('targets are judged from the figures: met, missed and not measured', () => {
    const good = targetChecks(peer(4200, { p50_ms: 0.25, p99_ms: 1.5 }, 0.8, 120 * 1024), null) as Check[];
    assert.equal(verdictOf(good, 'Max throughput'), 'met');
    assert.equal(verdictOf(good, 'Added p50'), 'met');
    assert.equal(verdictOf(good, 'Added p99'), 'met');
    assert.equal(verdictOf(good, 'Streaming: first event'), 'met');
    assert.equal(verdictOf(good, 'Peak RSS'), 'met');
    assert.equal(verdictOf(good, 'No saturation'), 'not measured');

    const bad = targetChecks(peer(3900, { p50_ms: 0.31, p99_ms: 2.5 }, 1.2, 151 * 1024), null) as Check[];
    assert.equal(verdictOf(bad, 'Max throughput'), 'NOT met');
    assert.equal(verdictOf(bad, 'Added p50'), 'NOT met');
    assert.equal(verdictOf(bad, 'Added p99'), 'NOT met');
    assert.equal(verdictOf(bad, 'Streaming: first event'), 'NOT met');
    assert.equal(verdictOf(bad, 'Peak RSS'), 'NOT met');
  });

  test('the bare proxies’ added latency of the scenario run is printed beside the latency targets; the verdict stays gw’s', () => {
    const stream = (firstEvent: number) => ({ first_event_ms: { p50: firstEvent, p99: firstEvent * 3 }, invalid: 0 });
    const records = [
      { mode: 'sqlite', group: 'chat@500', name: 'direct', kind: 'rate', round: 1, bad: 0, result: rate(0.2, 1.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'gw', kind: 'rate', round: 1, bad: 0, result: rate(0.6, 3.0, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'node-floor', kind: 'rate', round: 1, bad: 0, result: rate(0.45, 2.5, 500) },
      { mode: 'sqlite', group: 'chat@500', name: 'net-floor', kind: 'rate', round: 1, bad: 0, result: rate(0.35, 1.8, 500) },
      { mode: 'sqlite', group: 'stream', name: 'direct', kind: 'stream', round: 1, bad: 0, result: stream(0.5) },
      { mode: 'sqlite', group: 'stream', name: 'gw', kind: 'stream', round: 1, bad: 0, result: stream(1.4) },
      { mode: 'sqlite', group: 'stream', name: 'node-floor', kind: 'stream', round: 1, bad: 0, result: stream(1.0) },
    ];
    const checks = targetChecks(peer(4200, { p50_ms: 0.4, p99_ms: 1.5 }, 1.1, 120 * 1024), { modes: { sqlite: { records } } }) as Array<Check & { floor?: string }>;
    const of = (prefix: string) => checks.find((check) => check.target.startsWith(prefix))!;
    assert.equal(of('Added p50').floor, '+0.25 ms (node:http + undici), +0.15 ms (node:net)');
    assert.equal(of('Added p99').floor, '+1.50 ms (node:http + undici), +0.80 ms (node:net)');
    assert.equal(of('Streaming: first event').floor, '+0.50 ms', 'the node:net proxy answers whole bodies only: no stream floor of its own');
    const onlyNodeFloor = targetChecks(peer(4200, { p50_ms: 0.4, p99_ms: 1.5 }, 1.1, 120 * 1024), {
      modes: { sqlite: { records: records.filter((record) => record.name !== 'net-floor') } },
    }) as Array<Check & { floor?: string }>;
    assert.equal(onlyNodeFloor.find((check) => check.target.startsWith('Added p50'))!.floor, '+0.25 ms', 'a run without the node:net proxy (older results) prints the one floor');
    assert.equal(of('Added p50').verdict, 'NOT met', 'gw’s +0.4 ms misses 0.3 ms whatever the floor');
    assert.equal(of('Max throughput').floor, undefined);

    const withoutFloor = targetChecks(peer(4200, { p50_ms: 0.25, p99_ms: 1.5 }, 0.8, 120 * 1024), null) as Array<Check & { floor?: string }>;
    assert.equal(withoutFloor.find((check) => check.target.startsWith('Added p50'))!.floor, undefined);
  });

  test('one Redis round trip (median over rounds) is printed beside the Postgres + Redis latency targets; the verdict stays gw’s', () => {
    const chat = (mode: string, name: string, round: number, p50: number, p99: number) => ({ mode, group: 'chat@500', name, kind: 'rate', round, bad: 0, result: rate(p50, p99, 500) });
    const stream = (mode: string, name: string, round: number, firstEvent: number) => ({ mode, group: 'stream', name, kind: 'stream', round, bad: 0, result: { first_event_ms: { p50: firstEvent, p99: firstEvent * 3 }, invalid: 0 } });
    const embedded = [1, 2, 3].flatMap((round) => [
      chat('sqlite', 'direct', round, 0.2, 1.0), chat('sqlite', 'gw', round, 0.5, 3.0), stream('sqlite', 'direct', round, 0.5), stream('sqlite', 'gw', round, 1.2),
    ]);
    const shared = [1, 2, 3].flatMap((round) => [
      chat('postgres', 'direct', round, 0.2, 1.0), chat('postgres', 'gw', round, 0.8, 4.0), stream('postgres', 'direct', round, 0.5), stream('postgres', 'gw', round, 2.0),
    ]);
    const roundTrip = (round: number, gapMs: number, p50: number, p99: number) => ({ round, count: 2000, gap_ms: gapMs, rtt_ms: { p50, p90: p50 * 2, p99, max: p99 * 3 } });
    const redisRoundTrips = [roundTrip(1, 2, 0.07, 0.3), roundTrip(1, 50, 0.25, 0.6), roundTrip(2, 2, 0.09, 0.5), roundTrip(2, 50, 0.27, 0.7), roundTrip(3, 2, 0.08, 0.2), roundTrip(3, 50, 0.23, 0.5)];
    const postgres = { records: shared, redisRoundTrips };
    const checks = targetChecks(null, { modes: { sqlite: { records: embedded }, postgres } }) as Array<Check & { floor?: string }>;
    const of = (prefix: string) => checks.find((check) => check.target.startsWith(prefix))!;
    // Each row gets the round trip with its scenario's spacing: 500 req/s calls are 2 ms apart, streams ~60 ms.
    assert.equal(of('Postgres + Redis: added p50').floor, 'Redis round trip p50 0.08 ms (2 ms apart)');
    assert.equal(of('Postgres + Redis: added p99').floor, 'Redis round trip p99 0.30 ms (2 ms apart)');
    assert.equal(of('Postgres + Redis: added first event').floor, 'Redis round trip p50 0.25 ms (50 ms apart)');
    const onlyDense = targetChecks(null, { modes: { sqlite: { records: embedded }, postgres: { records: shared, redisRoundTrips: redisRoundTrips.filter((entry) => entry.gap_ms === 2) } } }) as Array<Check & { floor?: string }>;
    assert.equal(onlyDense.find((check) => check.target.startsWith('Postgres + Redis: added first event'))!.floor, undefined, 'no round trip at the stream spacing: no floor');
    // +0.6 against +0.3 misses 1.5× whatever a round trip costs.
    assert.equal(of('Postgres + Redis: added p50').verdict, 'NOT met');
    assert.equal(of('Postgres + Redis: max throughput')?.floor, undefined);

    const without = targetChecks(null, { modes: { sqlite: { records: embedded }, postgres: { records: shared } } }) as Array<Check & { floor?: string }>;
    assert.equal(without.find((check) => check.target.startsWith('Postgres + Redis: added p50'))!.floor, undefined, 'not measured: no floor');
  });

  test('Postgres + Redis throughput is judged on the rounds’ paired ratios, not on the ratio of two medians', () => {
    // The host slows down between rounds: each round's pair is measured back to back, so its ratio
    // holds while the medians of the two modes come from different rounds.
    const thr = (mode: string, round: number, rps: number, cpuS: number) => ({
      mode, group: 'thr@32', name: 'gw', kind: 'thr', round, bad: 0, gwCpuS: cpuS, result: { rps, requests: rps * 8 },
    });
    const direct = (mode: string, round: number) => ({ mode, group: 'thr@32', name: 'direct', kind: 'thr', round, bad: 0, result: { rps: 20000, requests: 160000 } });
    const embedded = [thr('sqlite', 1, 4000, 8), thr('sqlite', 2, 2000, 8), thr('sqlite', 3, 2100, 8), direct('sqlite', 1)];
    const shared = [thr('postgres', 1, 3000, 8), thr('postgres', 2, 1600, 8), thr('postgres', 3, 1500, 8), direct('postgres', 1)];
    // Rounds' ratios 1.33, 1.25, 1.4 (median 1.33); the medians' ratio would be 2100 / 1600 = 1.31.
    const byRound = pairedRatio(embedded, shared, 'thr@32', (a: { result: { rps: number } }, b: { result: { rps: number } }) => a.result.rps / b.result.rps);
    assert.ok(Math.abs(byRound - 4 / 3) < 1e-9, `paired ratio ${byRound}`);
    assert.equal(pairedRatio(embedded, [], 'thr@32', () => 1), null, 'no round with both modes: no ratio');

    const checks = targetChecks(null, { modes: { sqlite: { records: embedded }, postgres: { records: shared } } }) as Check[];
    const throughput = checks.find((check) => check.target.startsWith('Postgres + Redis: max throughput'))!;
    assert.equal(throughput.verdict, 'met');
    assert.ok(throughput.figure.startsWith('1.33×'), throughput.figure);
    // CPU per request: the same CPU seconds in every round, so its ratios are the throughput's.
    const cpu = checks.find((check) => check.target.startsWith('Postgres + Redis: gateway CPU'))!;
    assert.ok(cpu.figure.startsWith('1.33×'), cpu.figure);
  });

  test('a profile summary counts only the final window when asked', () => {
    const frame = (functionName: string) => ({ functionName, url: 'file:///x/dist/src/a.js', lineNumber: 0 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('startup') },
        { id: 2, callFrame: frame('request') },
      ],
      startTime: 0,
      endTime: 10_000_000,
      samples: [1, 1, 2, 2],
      timeDeltas: [0, 4_000_000, 4_000_000, 1_000_000],
    };
    const all = summarizeProfile(profile, 10);
    assert.equal(all.functions[0].name.startsWith('startup'), true);
    const last = summarizeProfile(profile, 10, 3);
    assert.deepEqual(last.functions.map((entry: { name: string }) => entry.name.split(' ')[0]), ['request']);
  });

  test('the hypervisor’s share of the CPU time is read from /proc/stat lines and summarised per mode', () => {
    // user nice system idle iowait irq softirq steal guest guest_nice
    const before = machineTicks('cpu  1000 0 200 5000 10 0 40 100 0 0');
    const after = machineTicks('cpu  1300 0 260 5540 10 0 50 190 0 0');
    assert.deepEqual(before, { busy: 1340, steal: 100, total: 6350 });
    assert.equal(stealPercent(before, after), 9, '90 stolen of 1,000 jiffies');
    assert.equal(stealPercent(before, before), null, 'no time passed: no share');
    assert.equal(machineTicks().total > 0, true, 'this machine’s own counters');

    const record = (name: string, round: number, stealPct: number | null | undefined) => ({ group: 'chat@500', name, round, stealPct });
    const summary = stealSummary([record('direct', 1, 1.5), record('gw', 1, 12.5), record('gw', 2, 2), record('direct', 2, null), record('gw', 3, undefined)]);
    assert.deepEqual(summary, { medianPct: 2, maxPct: 12.5, at: { group: 'chat@500', name: 'gw', round: 1 } });
    assert.equal(stealSummary([record('gw', 1, undefined)]), undefined, 'results from before steal was recorded');
    assert.equal(stealSummary(undefined), undefined);
  });
});
