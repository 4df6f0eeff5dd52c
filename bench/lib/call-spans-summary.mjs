/**
 * Where the calls of an open-loop run spent their time (bench/lib/call-spans-probe.mjs), as
 * percentiles of each span: the gateway's own work before and after the upstream exchange, the
 * wait between creating the upstream request and handing it to its socket, and the upstream's answer
 * time as the gateway saw it (from that hand-over, so the write itself counts there). Calls that
 * never reached the upstream (a cache hit, a refusal) are left out.
 * calls: Array<{ seen, created, written, answered, finished }> (ms, one clock) → [{ span, p50, p90, p99, max, calls }]
 */
export const SPANS = [
  ['gateway, before the upstream request', (call) => call.created - call.seen],
  ['upstream request waiting to be written', (call) => call.written - call.created],
  ['upstream, written → answer headers', (call) => call.answered - call.written],
  ['gateway, after the answer headers', (call) => call.finished - call.answered],
  ["gateway's own time (before + after)", (call) => call.created - call.seen + (call.finished - call.answered)],
  ['whole call inside the gateway', (call) => call.finished - call.seen],
];

export function summarizeSpans(calls) {
  const complete = calls.filter((call) => ['seen', 'created', 'written', 'answered', 'finished'].every((moment) => typeof call[moment] === 'number'));
  return SPANS.map(([span, measure]) => {
    const sorted = complete.map(measure).sort((a, b) => a - b);
    return { span, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.at(-1), calls: sorted.length };
  });
}

/** Nearest-rank percentile of an ascending array (as peerbench's load generator computes it). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return undefined;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}
