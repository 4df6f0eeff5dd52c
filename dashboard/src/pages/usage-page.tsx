import { useState } from 'preact/hooks';
import { SpendChart, type SpendPoint } from '../components/spend-chart.js';
import { Empty, ResourceView } from '../components/status-view.js';
import { formatMs, formatNumber, formatPercent, formatUsdString } from '../format.js';
import { usePage } from '../page-context.js';
import { useResource } from '../use-resource.js';

interface Summary {
  requests: number;
  errors: number;
  error_rate: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  spend_usd: string;
  cache_hit_rate: number | null;
  latency_ms: { p50: number | null; p95: number | null; p99: number | null };
}

const DAY_MS = 86_400_000;
const PRESETS = [
  { label: 'Last 24 hours', ms: DAY_MS },
  { label: 'Last 7 days', ms: 7 * DAY_MS },
  { label: 'Last 30 days', ms: 30 * DAY_MS },
] as const;

function dateInputValue(ms: number): string {
  const date = new Date(ms);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div class="stat">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

export function UsagePage() {
  const { api, orgId } = usePage();
  // The range is fixed when chosen (not re-read on every render) so refreshes show the same window.
  const [range, setRange] = useState(() => ({ from: Date.now() - DAY_MS, to: Date.now() + 60_000 }));
  const [groupBy, setGroupBy] = useState<'key' | 'model' | 'team'>('model');
  const query = { org_id: orgId, from: range.from, to: range.to };
  const summary = useResource(() => api.get<Summary>('/api/admin/usage/summary', query), [orgId, range]);
  const spend = useResource(
    () => api.get<{ data: SpendPoint[]; bucket_ms: number; from: number; to: number }>('/api/admin/usage/spend', { ...query, group_by: groupBy }),
    [orgId, range, groupBy],
  );

  return (
    <>
      <h1>Usage and spend</h1>
      <form class="toolbar" onSubmit={(event) => event.preventDefault()} aria-label="Date range">
        {PRESETS.map((preset) => (
          <button key={preset.label} type="button" onClick={() => setRange({ from: Date.now() - preset.ms, to: Date.now() + 60_000 })}>
            {preset.label}
          </button>
        ))}
        <label>
          From
          <input
            type="date"
            value={dateInputValue(range.from)}
            onChange={(event) => {
              const value = new Date(`${event.currentTarget.value}T00:00`).getTime();
              if (!Number.isNaN(value) && value < range.to) setRange({ ...range, from: value });
            }}
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={dateInputValue(range.to - 1)}
            onChange={(event) => {
              const value = new Date(`${event.currentTarget.value}T00:00`).getTime() + DAY_MS;
              if (!Number.isNaN(value) && value > range.from) setRange({ ...range, to: value });
            }}
          />
        </label>
        <button
          type="button"
          onClick={() => {
            summary.reload();
            spend.reload();
          }}
        >
          Refresh
        </button>
      </form>
      <ResourceView resource={summary} what="usage">
        {(data) => (
          <dl class="stats" data-testid="usage-summary">
            <Stat label="Spend" value={formatUsdString(data.spend_usd)} />
            <Stat label="Requests" value={formatNumber(data.requests)} />
            <Stat label="Errors" value={`${formatNumber(data.errors)} (${formatPercent(data.error_rate)})`} />
            <Stat label="Tokens" value={`${formatNumber(data.total_tokens)} (${formatNumber(data.prompt_tokens)} in, ${formatNumber(data.completion_tokens)} out)`} />
            <Stat label="Latency p50 / p95 / p99" value={`${formatMs(data.latency_ms.p50)} / ${formatMs(data.latency_ms.p95)} / ${formatMs(data.latency_ms.p99)}`} />
            <Stat label="Cache hit rate" value={data.cache_hit_rate === null ? 'no cache lookups' : formatPercent(data.cache_hit_rate)} />
          </dl>
        )}
      </ResourceView>
      <section aria-labelledby="spend-heading">
        <div class="section-head">
          <h2 id="spend-heading">Spend over time</h2>
          <label>
            Per
            <select value={groupBy} onChange={(event) => setGroupBy(event.currentTarget.value as typeof groupBy)}>
              <option value="model">model</option>
              <option value="key">key</option>
              <option value="team">team</option>
            </select>
          </label>
        </div>
        <ResourceView resource={spend} what="spend">
          {(data) =>
            data.data.length === 0 ? (
              <Empty>No spend in this range yet.</Empty>
            ) : (
              <SpendChart points={data.data} from={data.from} to={data.to} bucketMs={data.bucket_ms} />
            )
          }
        </ResourceView>
      </section>
    </>
  );
}
