import { DataTable } from '../components/data-table.js';
import { OrgRequired } from '../components/org-required.js';
import { Empty, ResourceView } from '../components/status-view.js';
import { formatMs, formatNumber, formatPercent, formatUsdNanos, formatUsdString } from '../format.js';
import { usePage } from '../page-context.js';
import { pick, rowsOf, show } from '../pick.js';
import { useResource } from '../use-resource.js';

function VariantTable({ experiment }: { experiment: Record<string, unknown> }) {
  const { api, orgId } = usePage();
  const id = show(pick(experiment, 'id'));
  const stats = useResource(() => api.get<Record<string, unknown>>(`/api/admin/experiments/${id}/stats`, { org_id: orgId }), [id, orgId]);
  return (
    <ResourceView resource={stats} what="per-variant outcomes" feature="Experiment statistics">
      {(data) => <VariantRows experiment={experiment} results={pick(data, 'variants', 'results') as Record<string, unknown>[] | undefined} />}
    </ResourceView>
  );
}

function VariantRows({ experiment, results }: { experiment: Record<string, unknown>; results: Record<string, unknown>[] | undefined }) {
  const variants = (pick<Record<string, unknown>[]>(experiment, 'variants') ?? []) as Record<string, unknown>[];
  const resultFor = (name: string): Record<string, unknown> => {
    if (Array.isArray(results)) return results.find((row) => pick(row, 'variant', 'name') === name) ?? {};
    return (results?.[name] as Record<string, unknown> | undefined) ?? {};
  };
  const totalWeight = variants.reduce((sum, variant) => sum + Number(pick(variant, 'weight') ?? 0), 0) || 1;
  return (
    <DataTable columns={['Variant', 'Weight', 'Model / version', 'Calls', 'Error rate', 'Mean latency', 'Tokens', 'Cost']} class="compact">
      {variants.map((variant) => {
        const name = show(pick(variant, 'name'));
        const stats = resultFor(name);
        const calls = Number(pick(stats, 'calls', 'requests') ?? 0);
        const errors = Number(pick(stats, 'errors') ?? 0);
        const latencyTotal = pick<number>(stats, 'latency_ms_total');
        const meanLatency = pick<number>(stats, 'mean_latency_ms', 'avg_latency_ms', 'latency_ms') ?? (latencyTotal !== undefined && calls ? latencyTotal / calls : undefined);
        const costNanos = pick<number>(stats, 'cost_nanos');
        const costUsd = pick<string>(stats, 'cost_usd');
        return (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{formatPercent(Number(pick(variant, 'weight') ?? 0) / totalWeight)}</td>
            <td>{show(pick(variant, 'model', 'template_version'))}</td>
            <td>{formatNumber(calls)}</td>
            <td>{calls ? formatPercent(errors / calls) : '—'}</td>
            <td>{formatMs(meanLatency)}</td>
            <td>{formatNumber(Number(pick(stats, 'prompt_tokens') ?? 0) + Number(pick(stats, 'completion_tokens') ?? 0))}</td>
            <td>{costUsd ? formatUsdString(costUsd) : costNanos !== undefined ? formatUsdNanos(costNanos) : '—'}</td>
          </tr>
        );
      })}
    </DataTable>
  );
}

function ExperimentsView() {
  const { api, orgId } = usePage();
  const experiments = useResource(() => api.get<unknown>('/api/admin/experiments', { org_id: orgId }), [orgId]);
  return (
    <>
      <ResourceView resource={experiments} what="experiments" feature="A/B experiments">
        {(body) => {
          const rows = rowsOf(body);
          if (rows.length === 0) return <Empty>No experiments yet.</Empty>;
          return (
            <ul class="plain">
              {rows.map((experiment) => (
                <li class="panel" key={show(pick(experiment, 'id'))}>
                  <h2>
                    {show(pick(experiment, 'name'))} <span class={`tag ${pick(experiment, 'status') === 'active' ? 'active' : 'revoked'}`}>{show(pick(experiment, 'status'))}</span>
                  </h2>
                  <p class="hint">
                    Splits {show(pick(experiment, 'target_kind'))} {show(pick(experiment, 'target'))}
                  </p>
                  <VariantTable experiment={experiment} />
                </li>
              ))}
            </ul>
          );
        }}
      </ResourceView>
    </>
  );
}

export function ExperimentsPage() {
  return (
    <>
      <h1>Experiments</h1>
      <OrgRequired>
        <ExperimentsView />
      </OrgRequired>
    </>
  );
}
