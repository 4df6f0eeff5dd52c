import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { Pager } from '../components/pager.js';
import { Empty, ResourceView } from '../components/status-view.js';
import { formatMs, formatNumber, formatTime, formatUsdString } from '../format.js';
import { usePage } from '../page-context.js';
import { useResource } from '../use-resource.js';

interface LogEntry {
  id: string;
  request_id: string;
  key_id: string | null;
  key_alias: string | null;
  team_id: string | null;
  model: string | null;
  operation: string;
  status: number;
  error_code: string | null;
  latency_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: string;
  deployment_id: string | null;
  attempts: number;
  cache: string | null;
  stream: boolean;
  details: Record<string, unknown> | null;
  created_at: number;
}

const PAGE_SIZE = 25;

function Details({ entry }: { entry: LogEntry }) {
  const rows: [string, string][] = [
    ['Request id', entry.request_id],
    ['Operation', entry.operation],
    ['Key', entry.key_alias ?? '—'],
    ['Team', entry.team_id ?? '—'],
    ['Deployment', entry.deployment_id ?? '—'],
    ['Attempts', String(entry.attempts)],
    ['Cache', entry.cache ?? '—'],
    ['Streamed', entry.stream ? 'yes' : 'no'],
    ['Error code', entry.error_code ?? '—'],
    ['Prompt / completion tokens', `${formatNumber(entry.prompt_tokens)} / ${formatNumber(entry.completion_tokens)}`],
    ...Object.entries(entry.details ?? {}).map(([name, value]): [string, string] => [name.replace(/_/g, ' '), typeof value === 'string' ? value : JSON.stringify(value)]),
  ];
  return (
    <dl class="details">
      {rows.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
      <p class="hint">Message contents are not shown: the request log keeps metadata only unless content logging is enabled.</p>
    </dl>
  );
}

export function RequestLogPage() {
  const { api, orgId } = usePage();
  const [filter, setFilter] = useState({ key_id: '', model: '', status: '' });
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState<string | undefined>();
  const keys = useResource(() => api.get<{ data: { id: string; name: string; key_alias: string }[] }>('/api/admin/keys', { org_id: orgId }), [orgId]);
  const log = useResource(
    () => api.get<{ data: LogEntry[]; has_more: boolean }>('/api/admin/request-log', { org_id: orgId, ...filter, limit: PAGE_SIZE, offset }),
    [orgId, filter, offset],
  );
  const update = (patch: Partial<typeof filter>) => {
    setFilter({ ...filter, ...patch });
    setOffset(0);
  };

  return (
    <>
      <h1>Request log</h1>
      <form class="toolbar" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Key
          <select value={filter.key_id} onChange={(event) => update({ key_id: event.currentTarget.value })}>
            <option value="">All keys</option>
            {keys.state === 'ready' &&
              keys.data.data.map((key) => (
                <option key={key.id} value={key.id}>
                  {key.name} ({key.key_alias})
                </option>
              ))}
          </select>
        </label>
        <label>
          Model
          <input value={filter.model} placeholder="any" onChange={(event) => update({ model: event.currentTarget.value.trim() })} />
        </label>
        <label>
          Status
          <select value={filter.status} onChange={(event) => update({ status: event.currentTarget.value })}>
            <option value="">Any</option>
            <option value="ok">Succeeded</option>
            <option value="error">Failed</option>
            <option value="401">401</option>
            <option value="402">402</option>
            <option value="429">429</option>
          </select>
        </label>
        <button type="button" onClick={log.reload}>
          Refresh
        </button>
      </form>
      <ResourceView resource={log} what="the request log">
        {(data) =>
          data.data.length === 0 ? (
            <Empty>{offset ? 'No more requests.' : 'No requests match. Requests appear here a moment after they finish.'}</Empty>
          ) : (
            <>
              <DataTable columns={['Time', 'Key', 'Model', 'Status', 'Latency', 'Tokens', 'Cost', { hidden: 'Details' }]} class="log">
                {data.data.map((entry) => [
                  <tr key={entry.id}>
                    <td>{formatTime(entry.created_at)}</td>
                    <td>
                      <code>{entry.key_alias ?? '—'}</code>
                    </td>
                    <td>{entry.model ?? '—'}</td>
                    <td>
                      <span class={`tag ${entry.status >= 400 ? 'revoked' : 'active'}`}>{entry.status}</span> {entry.error_code ?? ''}
                    </td>
                    <td>{formatMs(entry.latency_ms)}</td>
                    <td>{formatNumber(entry.prompt_tokens + entry.completion_tokens)}</td>
                    <td>{formatUsdString(entry.cost_usd)}</td>
                    <td>
                      <button type="button" aria-expanded={open === entry.id} onClick={() => setOpen(open === entry.id ? undefined : entry.id)}>
                        {open === entry.id ? 'Hide' : 'Details'}
                      </button>
                    </td>
                  </tr>,
                  open === entry.id && (
                    <tr key={`${entry.id}-details`} class="details-row">
                      <td colSpan={8}>
                        <Details entry={entry} />
                      </td>
                    </tr>
                  ),
                ])}
              </DataTable>
              <Pager offset={offset} pageSize={PAGE_SIZE} shown={data.data.length} hasMore={data.has_more} onOffset={setOffset} />
            </>
          )
        }
      </ResourceView>
    </>
  );
}
