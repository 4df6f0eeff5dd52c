import { formatTime, formatUsdNanos } from '../format.js';

export interface SpendPoint {
  bucket: number;
  group: string;
  label: string;
  cost_nanos: number;
}

const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#6b7280'];
const MAX_SERIES = 6;

interface Series {
  group: string;
  label: string;
  color: string;
}

/** Keeps the largest groups and folds the rest into "other", so the legend stays readable. */
function seriesOf(points: SpendPoint[]): { series: Series[]; groupOf: (group: string) => string } {
  const totals = new Map<string, { label: string; total: number }>();
  for (const point of points) {
    const entry = totals.get(point.group) ?? { label: point.label, total: 0 };
    entry.total += point.cost_nanos;
    totals.set(point.group, entry);
  }
  const ranked = [...totals.entries()].sort((a, b) => b[1].total - a[1].total);
  const kept = ranked.slice(0, MAX_SERIES);
  const series = kept.map(([group, { label }], index) => ({ group, label: label || '(none)', color: COLORS[index] }));
  const keptIds = new Set(kept.map(([group]) => group));
  if (ranked.length > MAX_SERIES) series.push({ group: '__other', label: 'other', color: COLORS[MAX_SERIES] });
  return { series, groupOf: (group) => (keptIds.has(group) ? group : '__other') };
}

/** Stacked bars of spend per time bucket, hand-drawn in SVG, with the same numbers as a table for screen readers. */
export function SpendChart({ points, from, to, bucketMs }: { points: SpendPoint[]; from: number; to: number; bucketMs: number }) {
  const { series, groupOf } = seriesOf(points);
  const firstBucket = from - (from % bucketMs);
  const bucketCount = Math.max(1, Math.min(400, Math.ceil((to - firstBucket) / bucketMs)));
  const stacks = Array.from({ length: bucketCount }, () => new Map<string, number>());
  for (const point of points) {
    const index = Math.floor((point.bucket - firstBucket) / bucketMs);
    if (index < 0 || index >= bucketCount) continue;
    const group = groupOf(point.group);
    stacks[index].set(group, (stacks[index].get(group) ?? 0) + point.cost_nanos);
  }
  const totals = stacks.map((stack) => [...stack.values()].reduce((sum, value) => sum + value, 0));
  const max = Math.max(1, ...totals);
  const width = 800;
  const height = 240;
  const padLeft = 90;
  const padBottom = 24;
  const plotWidth = width - padLeft - 10;
  const plotHeight = height - padBottom - 10;
  const barWidth = plotWidth / bucketCount;
  const labelEvery = Math.ceil(bucketCount / 8);

  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Spend over time" preserveAspectRatio="none">
        {[0, 0.5, 1].map((fraction) => {
          const y = 10 + plotHeight * (1 - fraction);
          return (
            <g key={fraction}>
              <line x1={padLeft} x2={width - 10} y1={y} y2={y} class="grid" />
              <text x={padLeft - 6} y={y + 4} text-anchor="end" class="axis">
                {formatUsdNanos(Math.round(max * fraction))}
              </text>
            </g>
          );
        })}
        {stacks.map((stack, index) => {
          let y = 10 + plotHeight;
          const x = padLeft + index * barWidth;
          return (
            <g key={index}>
              {series.map((entry) => {
                const value = stack.get(entry.group) ?? 0;
                if (!value) return null;
                const barHeight = (value / max) * plotHeight;
                y -= barHeight;
                return (
                  <rect key={entry.group} x={x + barWidth * 0.1} y={y} width={Math.max(1, barWidth * 0.8)} height={barHeight} fill={entry.color}>
                    <title>{`${entry.label}: ${formatUsdNanos(value)} (${formatTime(firstBucket + index * bucketMs)})`}</title>
                  </rect>
                );
              })}
              {index % labelEvery === 0 && (
                <text x={x + barWidth / 2} y={height - 6} text-anchor="middle" class="axis">
                  {new Date(firstBucket + index * bucketMs).toLocaleString('en-GB', bucketMs < 86_400_000 ? { hour: '2-digit', minute: '2-digit' } : { day: 'numeric', month: 'short' })}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {series.map((entry) => (
            <li key={entry.group}>
              <span class="swatch" style={{ background: entry.color }} aria-hidden="true" />
              {entry.label}
            </li>
          ))}
        </ul>
      </figcaption>
      <details>
        <summary>Show as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Period</th>
              <th scope="col">Group</th>
              <th scope="col">Spend</th>
            </tr>
          </thead>
          <tbody>
            {points.map((point) => (
              <tr key={`${point.bucket}-${point.group}`}>
                <td>{formatTime(point.bucket)}</td>
                <td>{point.label}</td>
                <td>{formatUsdNanos(point.cost_nanos)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
