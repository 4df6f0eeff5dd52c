import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { OrgRequired } from '../components/org-required.js';
import { Empty, ErrorMessage, ResourceView } from '../components/status-view.js';
import { formatTime } from '../format.js';
import { usePage } from '../page-context.js';
import { pick, rowsOf, show } from '../pick.js';
import { useResource } from '../use-resource.js';

function GuardrailsView() {
  const { api, orgId } = usePage();
  const [error, setError] = useState<string | undefined>();
  const list = useResource(() => api.get<unknown>('/gw/guardrail/list'), [orgId]);
  const logs = useResource(() => api.get<unknown>('/gw/guardrail/logs', { limit: 50 }), [orgId]);

  async function toggle(row: Record<string, unknown>) {
    const id = show(pick(row, 'id', 'guardrail_id'));
    const enabled = Boolean(pick(row, 'enabled_by_default', 'enabled', 'is_enabled'));
    setError(undefined);
    try {
      await api.send('PATCH', `/api/admin/guardrails/${id}`, { org_id: orgId, enabled_by_default: !enabled });
      list.reload();
    } catch (caught) {
      setError(`Could not ${enabled ? 'disable' : 'enable'} the guardrail: ${caught instanceof Error ? caught.message : String(caught)}`);
    }
  }

  return (
    <>
      {error && <ErrorMessage message={error} />}
      <section aria-labelledby="guardrail-list-heading">
        <h2 id="guardrail-list-heading">Definitions</h2>
        <ResourceView resource={list} what="guardrails" feature="Guardrails">
          {(body) => {
            const rows = rowsOf(body);
            if (rows.length === 0) return <Empty>No guardrails are defined for this organization.</Empty>;
            return (
              <DataTable columns={['Name', 'Kind', 'Runs', 'Action', 'On by default', { hidden: 'Toggle' }]}>
                {rows.map((row) => {
                  const enabled = Boolean(pick(row, 'enabled_by_default', 'enabled', 'is_enabled'));
                  const name = show(pick(row, 'name'));
                  return (
                    <tr key={show(pick(row, 'id', 'guardrail_id'))}>
                      <td>{name}</td>
                      <td>{show(pick(row, 'kind', 'type'))}</td>
                      <td>{show(pick(row, 'stage', 'mode'))}</td>
                      <td>{show(pick(row, 'action'))}</td>
                      <td>
                        <span class={`tag ${enabled ? 'active' : 'revoked'}`}>{enabled ? 'enabled' : 'disabled'}</span>
                      </td>
                      <td>
                        <button type="button" onClick={() => toggle(row)} aria-label={`${enabled ? 'Disable' : 'Enable'} ${name}`}>
                          {enabled ? 'Disable' : 'Enable'}
                        </button>
                      </td>
                    </tr>
                  );
                })}
              </DataTable>
            );
          }}
        </ResourceView>
      </section>
      <section aria-labelledby="guardrail-log-heading">
        <h2 id="guardrail-log-heading">Recent triggers</h2>
        <ResourceView resource={logs} what="guardrail triggers" feature="Guardrail logs">
          {(body) => {
            const rows = rowsOf(body);
            if (rows.length === 0) return <Empty>No guardrail has triggered yet.</Empty>;
            return (
              <DataTable columns={['Time', 'Guardrail', 'Outcome', 'Found', 'Key', 'Request']}>
                {rows.map((row, index) => (
                  <tr key={show(pick(row, 'id')) + index}>
                    <td>{formatTime(pick<number | string>(row, 'created_at', 'time', 'timestamp'))}</td>
                    <td>{show(pick(row, 'guardrail_name', 'name', 'guardrail_id'))}</td>
                    <td>{show(pick(row, 'action', 'outcome', 'verdict'))}</td>
                    <td>{show(pick(row, 'types', 'finding_types', 'categories'))}</td>
                    <td>
                      <code>{show(pick(row, 'key_alias'))}</code>
                    </td>
                    <td>
                      <code>{show(pick(row, 'request_id'))}</code>
                    </td>
                  </tr>
                ))}
              </DataTable>
            );
          }}
        </ResourceView>
      </section>
    </>
  );
}

export function GuardrailsPage() {
  return (
    <>
      <h1>Guardrails</h1>
      <OrgRequired>
        <GuardrailsView />
      </OrgRequired>
    </>
  );
}
