/**
 * Median time of each step over the recorded calls (bench/lib/call-timeline-probe.mjs), in the
 * order the steps happen. A step missing from some calls (a cache hit never reaches upstream) is
 * summarised over the calls that have it, and says how many those were.
 * calls: Array<Record<step, ms after arrival>> → [{ step, medianMs, calls }]
 */
export function summarizeTimeline(calls) {
  const times = new Map();
  for (const call of calls) {
    for (const [step, ms] of Object.entries(call)) {
      if (!times.has(step)) times.set(step, []);
      times.get(step).push(ms);
    }
  }
  const rows = [...times].map(([step, values]) => ({ step, medianMs: median(values), calls: values.length }));
  return rows.sort((a, b) => a.medianMs - b.medianMs);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Rows of several timelines side by side: every step any of them has, in the order of the timeline
 * with the most steps (a step it lacks goes by its median in the first one that has it).
 * timelines: { label: rows } → { labels, rows: [{ step, byLabel }] }
 */
export function alignTimelines(timelines) {
  const labels = Object.keys(timelines);
  const reference = labels.reduce((most, label) => (timelines[label].length > timelines[most].length ? label : most), labels[0]);
  const order = new Map(timelines[reference].map((row) => [row.step, row.medianMs]));
  for (const label of labels) for (const row of timelines[label]) if (!order.has(row.step)) order.set(row.step, row.medianMs);
  const steps = [...order].sort((a, b) => a[1] - b[1]).map(([step]) => step);
  return {
    labels,
    rows: steps.map((step) => ({
      step,
      byLabel: Object.fromEntries(labels.map((label) => [label, timelines[label].find((row) => row.step === step)?.medianMs])),
    })),
  };
}
