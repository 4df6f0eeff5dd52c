// Figures for docs/benchmarks.md, computed from peerbench.json and scenarios.json: medians over
// rounds, added latency as gateway minus direct within the same round, and the issue's targets.

export const median = (values) => {
  const sorted = values.filter((value) => typeof value === 'number' && Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

export const fmt = (value, digits) => {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  if (digits !== undefined) return value.toFixed(digits);
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString('en-US');
  return magnitude < 10 ? value.toFixed(2) : magnitude < 100 ? value.toFixed(1) : value.toFixed(0);
};
export const signed = (value) => (value === null || value === undefined ? '–' : `${value >= 0 ? '+' : ''}${fmt(value)}`);
const mb = (kb) => (kb ? kb / 1024 : null);

/** One row per peerbench target, plus the gateway's ratios to Portkey. */
export function peerbenchRows(peer, gwName = 'gw') {
  if (!peer) return [];
  const portkeyRps = peer.targets.portkey?.throughput?.[32]?.rps ?? null;
  return Object.entries(peer.targets).map(([name, target]) => {
    const overhead = target.overhead_vs_direct;
    const rss = target.info?.rss_peak_kb ?? (name === 'direct' ? target.info?.mock_rss_peak_kb : null);
    const rps32 = target.throughput?.[32]?.rps ?? null;
    // CPU time per request holds up on a busy machine, where throughput and latency do not.
    const cpuUsPerRequest = median((target.throughput?.[32]?.rounds ?? []).map((round) => (round.gw_cpu_pct && round.rps ? (round.gw_cpu_pct / 100 / round.rps) * 1e6 : null)));
    return {
      cpuUsPerRequest,
      name,
      rps32,
      rps128: target.throughput?.[128]?.rps ?? null,
      vsPortkey: name !== 'portkey' && name !== 'direct' && portkeyRps && rps32 ? rps32 / portkeyRps : null,
      fixed: target.fixed_rate,
      added: overhead?.fixed_rate ?? null,
      firstEventP50: target.stream?.first_event_p50_ms ?? null,
      firstEventP99: target.stream?.first_event_p99_ms ?? null,
      firstEventAdded: overhead?.stream_first_event_p50_ms ?? null,
      streamTotalP50: target.stream?.total_p50_ms ?? null,
      rssPeakMb: mb(rss),
      isMock: name === 'direct',
      bad: target.errors_total,
      isGateway: name === gwName,
    };
  });
}

const resultOf = (record) => record.result;
const metricOf = {
  rate: { p50: (r) => r?.latency_ms?.p50 ?? null, p99: (r) => r?.latency_ms?.p99 ?? null },
  stream: { p50: (r) => r?.first_event_ms?.p50 ?? null, p99: (r) => r?.first_event_ms?.p99 ?? null },
};

/** CPU seconds spent over a throughput measurement, per answered request, in µs; null when either is missing. */
function microsPerRequest(seconds, record) {
  return seconds && record.result?.requests ? (seconds * 1e6) / record.result.requests : null;
}

/**
 * The shared servers' CPU per answered request (µs, median over rounds) by process name, from the
 * measurements that recorded it (Postgres + Redis mode); undefined when none did.
 */
function servicesCpuUsPerRequest(records) {
  const names = [...new Set(records.flatMap((record) => Object.keys(record.servicesCpuS ?? {})))];
  if (names.length === 0) return undefined;
  return Object.fromEntries(names.map((name) => [name, median(records.map((record) => microsPerRequest(record.servicesCpuS?.[name], record)))]));
}

/** Per-mode, per-group rows: each gateway variant against the direct call of the same round. */
export function scenarioRows(mode, settings) {
  const rows = [];
  const records = mode.records ?? [];
  const groups = [...new Set(records.map((record) => record.group))];
  for (const group of groups) {
    const inGroup = records.filter((record) => record.group === group);
    const direct = inGroup.filter((record) => record.name === 'direct');
    const directOf = (round) => direct.find((record) => record.round === round);
    for (const name of [...new Set(inGroup.map((record) => record.name))].filter((each) => each !== 'direct')) {
      const own = inGroup.filter((record) => record.name === name);
      const kind = own[0].kind;
      const row = { group, name, kind, rounds: own.length, bad: own.reduce((sum, record) => sum + record.bad, 0), gwCpuPct: median(own.map((record) => record.gwCpuPct)) };
      if (kind === 'thr') {
        row.rps = median(own.map((record) => resultOf(record)?.rps ?? null));
        row.cpuUsPerRequest = median(own.map((record) => microsPerRequest(record.gwCpuS, record)));
        const services = servicesCpuUsPerRequest(own);
        if (services) row.servicesCpuUsPerRequest = services;
        row.directRps = median(direct.map((record) => resultOf(record)?.rps ?? null));
        row.ratioToDirect = median(own.map((record) => {
          const pair = directOf(record.round);
          return pair?.result?.rps && record.result?.rps ? record.result.rps / pair.result.rps : null;
        }));
      } else {
        const pick = metricOf[kind];
        for (const quantile of ['p50', 'p99']) {
          row[quantile] = median(own.map((record) => pick[quantile](record.result)));
          row[`direct_${quantile}`] = median(direct.map((record) => pick[quantile](record.result)));
          row[`added_${quantile}`] = median(own.map((record) => {
            const pair = directOf(record.round);
            const mine = pick[quantile](record.result);
            const theirs = pair ? pick[quantile](pair.result) : null;
            return mine !== null && theirs !== null ? mine - theirs : null;
          }));
        }
        if (kind === 'rate') {
          const offered = own[0].result?.target_rate ?? null;
          row.offered = offered;
          row.achieved = median(own.map((record) => record.result?.achieved_rate ?? null));
          row.saturated = own.some((record) => !record.result || record.result.achieved_rate < 0.95 * record.result.target_rate);
        } else {
          row.totalP50 = median(own.map((record) => record.result?.total_ms?.p50 ?? null));
          row.streamsPerSecond = median(own.map((record) => record.result?.streams_per_s ?? null));
        }
      }
      rows.push(row);
    }
  }
  void settings;
  return rows;
}

const verdict = (met, measured = true) => (!measured ? 'not measured' : met ? 'met' : 'NOT met');

/** The issue's targets, each with the figure it was judged on (and, for added latency, the bare Node proxy's in `floor`). */
export function targetChecks(peer, scenarios, gwName = 'gw') {
  const checks = [];
  const gw = peer?.targets?.[gwName];
  const portkey = peer?.targets?.portkey;
  const ratio = gw && portkey?.throughput?.[32]?.rps ? gw.throughput[32].rps / portkey.throughput[32].rps : null;
  checks.push({ target: 'Max throughput on one core ≥ 4× Portkey (rps @32 conns)', figure: ratio === null ? '–' : `${fmt(ratio)}×`, verdict: verdict(ratio !== null && ratio >= 4, ratio !== null) });
  const rows = peerbenchRows(peer, gwName);
  const ownCpu = rows.find((row) => row.name === gwName)?.cpuUsPerRequest ?? null;
  const portkeyCpu = rows.find((row) => row.name === 'portkey')?.cpuUsPerRequest ?? null;
  if (ownCpu !== null && portkeyCpu !== null) {
    const perCore = portkeyCpu / ownCpu;
    checks.push({ target: 'Same, per CPU-second actually used (Portkey’s CPU µs per request ÷ gw’s, @32 conns)', figure: `${fmt(perCore)}× (${fmt(ownCpu)} vs ${fmt(portkeyCpu)} µs)`, verdict: verdict(perCore >= 4) });
  }
  const added500 = gw?.overhead_vs_direct?.fixed_rate?.[500];
  const p50 = added500?.p50_ms ?? null;
  const p99 = added500?.p99_ms ?? null;
  const sqliteRows = scenarios?.modes?.sqlite ? scenarioRows(scenarios.modes.sqlite) : [];
  // What the bare proxies added in the same run, printed beside the absolute latency targets (the
  // verdicts do not use them): bench/bare-node-proxy.mjs, the floor under a gateway built on
  // node:http and undici, and bench/bare-net-proxy.mjs (whole answers only), the same on node:net
  // alone: the lower floor, which gw's own HTTP edge and upstream client can approach.
  const floorOf = (group, quantile) => {
    const addedBy = (name) => sqliteRows.find((row) => row.group === group && row.name === name)?.[`added_${quantile}`] ?? null;
    const nodeFloor = addedBy('node-floor');
    const netFloor = addedBy('net-floor');
    if (nodeFloor === null) return undefined;
    return netFloor === null ? `${signed(nodeFloor)} ms` : `${signed(nodeFloor)} ms (node:http + undici), ${signed(netFloor)} ms (node:net)`;
  };
  checks.push({ target: 'Added p50 at 500 req/s ≤ 0.3 ms', figure: p50 === null ? '–' : `${signed(p50)} ms`, verdict: verdict(p50 !== null && p50 <= 0.3, p50 !== null), floor: floorOf('chat@500', 'p50') });
  checks.push({ target: 'Added p99 at 500 req/s ≤ 2 ms', figure: p99 === null ? '–' : `${signed(p99)} ms`, verdict: verdict(p99 !== null && p99 <= 2, p99 !== null), floor: floorOf('chat@500', 'p99') });
  const at2000 = sqliteRows.find((row) => row.group === 'chat@2000' && row.name === 'gw');
  checks.push({ target: 'No saturation at 2,000 req/s (answers ≥ 95% of offered, every round)', figure: at2000 ? `${fmt(at2000.achieved)} req/s done` : '–', verdict: verdict(at2000 && !at2000.saturated, Boolean(at2000)) });
  const firstAdded = gw?.overhead_vs_direct?.stream_first_event_p50_ms ?? null;
  checks.push({ target: 'Streaming: first event added ≤ 1 ms (p50)', figure: firstAdded === null ? '–' : `${signed(firstAdded)} ms`, verdict: verdict(firstAdded !== null && firstAdded <= 1, firstAdded !== null), floor: floorOf('stream', 'p50') });
  const firstP50 = gw?.stream?.first_event_p50_ms ?? null;
  const totalP50 = gw?.stream?.total_p50_ms ?? null;
  const live = firstP50 !== null && totalP50 !== null ? firstP50 < totalP50 / 4 : null;
  checks.push({ target: 'Streaming: chunks forwarded as they arrive (first event < ¼ of the stream time)', figure: live === null ? '–' : `${fmt(firstP50)} of ${fmt(totalP50)} ms`, verdict: verdict(live, live !== null) });
  const rssPeak = gw?.info?.rss_peak_kb ? gw.info.rss_peak_kb / 1024 : null;
  checks.push({ target: 'Peak RSS ≤ 150 MB under load', figure: rssPeak === null ? '–' : `${fmt(rssPeak)} MB`, verdict: verdict(rssPeak !== null && rssPeak <= 150, rssPeak !== null) });
  const soak = scenarios?.modes?.sqlite?.soak;
  if (soak && soak.samples.length >= 3) {
    const values = soak.samples.map((sample) => sample.rss_kb);
    const half = Math.floor(values.length / 2);
    const firstHalf = Math.max(...values.slice(0, half));
    const secondHalf = Math.max(...values.slice(half));
    const growth = (secondHalf - firstHalf) / firstHalf;
    checks.push({ target: `RSS flat over a ${Math.round(soak.durationS / 60)}-minute soak (second half peak within 10% of the first half's)`, figure: `${signed(growth * 100)}%`, verdict: verdict(growth <= 0.1 && soak.bad === 0) });
  } else {
    checks.push({ target: 'RSS flat over a 10-minute soak', figure: '–', verdict: 'not measured (run with BENCH_SOAK_S=600)' });
  }
  checks.push(...postgresChecks(scenarios));
  const bad = (gw?.errors_total ?? 0) + Object.values(scenarios?.modes ?? {}).reduce((sum, mode) => sum + (mode.records ?? []).reduce((inner, record) => inner + record.bad, 0), 0);
  const alive = gw?.info?.alive_at_end !== false;
  checks.push({ target: 'Every gw answer 2xx and the mock’s, gw alive at the end (peerbench + scenarios)', figure: `${bad} bad`, verdict: verdict(bad === 0 && alive) });
  return checks;
}

/**
 * The median over rounds of ratio(embedded gw record, Postgres gw record) for one group, pairing
 * the two modes' measurements of the same round (they run back to back); null when no round has both.
 */
export function pairedRatio(embeddedRecords, sharedRecords, group, ratio) {
  const gwOf = (records, round) => (records ?? []).find((record) => record.group === group && record.name === 'gw' && record.round === round);
  const rounds = [...new Set((embeddedRecords ?? []).filter((record) => record.group === group && record.name === 'gw').map((record) => record.round))];
  return median(rounds.map((round) => {
    const embedded = gwOf(embeddedRecords, round);
    const shared = gwOf(sharedRecords, round);
    if (!embedded || !shared) return null;
    const value = ratio(embedded, shared);
    return Number.isFinite(value) ? value : null;
  }));
}

/**
 * How far apart the PINGs of the Redis round trip printed beside a Postgres + Redis scenario are:
 * as far apart as that scenario's calls (500 req/s: 2 ms; the streams start one every ~60 ms).
 * bench/run-scenarios.mjs measures each spacing named here.
 */
export const ROUND_TRIP_GAP_MS = { 'chat@500': 2, stream: 50 };

/** Postgres + Redis against the embedded defaults, same scenarios: within 1.5× (latency floor 0.05 ms). */
function postgresChecks(scenarios) {
  const sqlite = scenarios?.modes?.sqlite;
  const postgres = scenarios?.modes?.postgres;
  if (!sqlite || !postgres || postgres.skipped) {
    return [{ target: 'Postgres + Redis within 1.5× of the embedded defaults', figure: '–', verdict: `not measured${postgres?.skipped ? ` (${postgres.skipped})` : ''}` }];
  }
  const a = scenarioRows(sqlite);
  const b = scenarioRows(postgres);
  const find = (rows, group) => rows.find((row) => row.group === group && row.name === 'gw');
  const checks = [];
  const thrA = find(a, 'thr@32');
  const thrB = find(b, 'thr@32');
  if (thrA && thrB) {
    const rps = (record) => record.result?.rps ?? null;
    const cpuUs = (record) => microsPerRequest(record.gwCpuS, record);
    const factor = pairedRatio(sqlite.records, postgres.records, 'thr@32', (embedded, shared) => rps(embedded) / rps(shared)) ?? thrA.rps / thrB.rps;
    checks.push({ target: 'Postgres + Redis: max throughput within 1.5× (embedded ÷ Postgres, median of the rounds’ ratios)', figure: `${fmt(factor)}× (${fmt(thrB.rps)} vs ${fmt(thrA.rps)} req/s)`, verdict: verdict(factor <= 1.5) });
    if (thrA.cpuUsPerRequest && thrB.cpuUsPerRequest) {
      const cpuFactor = pairedRatio(sqlite.records, postgres.records, 'thr@32', (embedded, shared) => cpuUs(shared) / cpuUs(embedded)) ?? thrB.cpuUsPerRequest / thrA.cpuUsPerRequest;
      checks.push({ target: 'Postgres + Redis: gateway CPU per request within 1.5× (median of the rounds’ ratios)', figure: `${fmt(cpuFactor)}× (${fmt(thrB.cpuUsPerRequest)} vs ${fmt(thrA.cpuUsPerRequest)} µs)`, verdict: verdict(cpuFactor <= 1.5) });
    }
  }
  // One Redis round trip from the gateway's CPU, its PINGs as far apart as the scenario's calls,
  // median over the rounds: the least a call that checks shared state before its upstream request
  // adds over the embedded figure (context only).
  const roundTrips = postgres.redisRoundTrips ?? [];
  const roundTripOf = (quantile, gapMs) => {
    const value = median(roundTrips.filter((entry) => entry.gap_ms === gapMs).map((entry) => entry.rtt_ms?.[quantile]));
    return value === null ? undefined : `Redis round trip ${quantile} ${fmt(value)} ms (${gapMs} ms apart)`;
  };
  for (const [group, quantile, label] of [['chat@500', 'p50', 'added p50 at 500 req/s'], ['chat@500', 'p99', 'added p99 at 500 req/s'], ['stream', 'p50', 'added first event p50']]) {
    const x = find(a, group);
    const y = find(b, group);
    if (!x || !y) continue;
    const base = x[`added_${quantile}`];
    const other = y[`added_${quantile}`];
    if (base === null || other === null) continue;
    const limit = Math.max(1.5 * base, base + 0.05);
    // Past saturation the figures are queueing, and a ratio of two queues says nothing.
    const saturated = x.saturated || y.saturated;
    checks.push({
      target: `Postgres + Redis: ${label} ≤ max(1.5×, +0.05 ms) of embedded`,
      figure: `${signed(other)} vs ${signed(base)} ms`,
      verdict: saturated ? 'inconclusive (a mode was saturated)' : verdict(other <= limit),
      floor: roundTripOf(quantile, ROUND_TRIP_GAP_MS[group]),
    });
  }
  if (sqlite.rssPeakKb && postgres.rssPeakKb) {
    const factor = postgres.rssPeakKb / sqlite.rssPeakKb;
    checks.push({ target: 'Postgres + Redis: peak RSS within 1.5×', figure: `${fmt(postgres.rssPeakKb / 1024)} vs ${fmt(sqlite.rssPeakKb / 1024)} MB`, verdict: verdict(factor <= 1.5) });
  }
  return checks;
}

/**
 * The CPU time the hypervisor took during a mode's measurements (each record's `stealPct`, from
 * measure.mjs): the median and the highest, with the measurement it was. Undefined when no record
 * has it (results from before it was recorded).
 */
export function stealSummary(records) {
  const measured = (records ?? []).filter((record) => typeof record.stealPct === 'number');
  if (measured.length === 0) return undefined;
  const highest = measured.reduce((most, record) => (record.stealPct > most.stealPct ? record : most));
  return { medianPct: median(measured.map((record) => record.stealPct)), maxPct: highest.stealPct, at: { group: highest.group, name: highest.name, round: highest.round } };
}
