import { DataTable } from '../components/data-table.js';
import { Empty, ResourceView } from '../components/status-view.js';
import { formatMs, formatPercent, formatTime } from '../format.js';
import { usePage } from '../page-context.js';
import { pick, rowsOf, show } from '../pick.js';
import { useResource } from '../use-resource.js';

export function ProvidersPage() {
  const { api } = usePage();
  const health = useResource(() => api.get<unknown>('/api/admin/deployments/health'), []);
  return (
    <>
      <h1>Providers</h1>
      <p class="hint">Each deployment is one model at one provider. A circuit opens after repeated failures and traffic moves to the next deployment.</p>
      <ResourceView resource={health} what="deployment health" feature="Deployment health">
        {(body) => {
          const rows = rowsOf(body);
          if (rows.length === 0) return <Empty>No deployments are configured.</Empty>;
          return (
            <DataTable columns={['Model', 'Provider', 'Upstream model', 'Circuit', 'Latency', 'Time to first token', 'Error rate', 'In flight']}>
              {rows.map((row, index) => {
                const circuit = show(pick(row, 'circuit', 'circuit_state', 'state'));
                const openedAt = pick<number>(row, 'circuit_opened_at', 'circuitOpenedAt');
                const reason = pick<string>(row, 'circuit_reason', 'circuitReason');
                const enabled = pick<boolean>(row, 'enabled');
                return (
                  <tr key={show(pick(row, 'deployment_id', 'deploymentId')) + index}>
                    <td>{show(pick(row, 'model', 'model_id', 'modelId'))}</td>
                    <td>{show(pick(row, 'provider'))}</td>
                    <td>{show(pick(row, 'upstream_model', 'upstreamModel'))}</td>
                    <td>
                      <span class={`tag circuit-${circuit}`}>{enabled === false ? 'disabled' : circuit}</span>
                      {openedAt ? <span class="hint"> since {formatTime(openedAt)}</span> : null}
                      {reason ? <span class="hint"> ({reason})</span> : null}
                    </td>
                    <td>{formatMs(pick<number>(row, 'latency_ms', 'latencyMs'))}</td>
                    <td>{formatMs(pick<number>(row, 'time_to_first_token_ms', 'timeToFirstTokenMs'))}</td>
                    <td>{formatPercent(pick<number>(row, 'error_rate', 'errorRate') ?? 0)}</td>
                    <td>{show(pick(row, 'in_flight', 'inFlight') ?? 0)}</td>
                  </tr>
                );
              })}
            </DataTable>
          );
        }}
      </ResourceView>
    </>
  );
}
