import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { OrgRequired } from '../components/org-required.js';
import { Pager } from '../components/pager.js';
import { Empty, ErrorMessage, ResourceView } from '../components/status-view.js';
import { formatTime, formatUsdString } from '../format.js';
import { usePage } from '../page-context.js';
import { useResource } from '../use-resource.js';

interface Balance {
  balance_usd: string;
  reserved_usd: string;
  credited_usd: string;
  spent_usd: string;
}

interface HistoryEntry {
  created_at: string;
  request_id: string;
  key_alias: string;
  model: string;
  operation: string;
  cost_usd: string;
  unpriced: boolean;
}

const PAGE_SIZE = 20;

function TopUpForm({ onDone }: { onDone: () => void }) {
  const { api, orgId } = usePage();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | undefined>();
  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    try {
      await api.send('POST', `/api/admin/orgs/${orgId}/credits`, { amount_usd: String(form.get('amount')), note: String(form.get('note') ?? '') || null });
      setMessage({ ok: true, text: 'Credits added.' });
      (event.target as HTMLFormElement).reset();
      onDone();
    } catch (caught) {
      setMessage({ ok: false, text: `Credits were not added: ${caught instanceof Error ? caught.message : String(caught)}` });
    }
  }
  return (
    <form class="toolbar" onSubmit={submit} aria-label="Add credits">
      <label>
        Add credits (USD)
        <input name="amount" required inputMode="decimal" pattern="\d+(\.\d{1,9})?" />
      </label>
      <label>
        Note
        <input name="note" maxLength={500} />
      </label>
      <button type="submit">Add</button>
      {message && (message.ok ? <span role="status">{message.text}</span> : <ErrorMessage message={message.text} />)}
    </form>
  );
}

function CreditsView() {
  const { api, orgId, session } = usePage();
  const [offset, setOffset] = useState(0);
  const balance = useResource(() => api.get<Balance>('/api/credits/balance'), [orgId]);
  const history = useResource(() => api.get<{ data: HistoryEntry[]; has_more: boolean }>('/api/credits/history', { limit: PAGE_SIZE, offset }), [orgId, offset]);
  return (
    <>
      <ResourceView resource={balance} what="the credit balance" feature="Credits">
        {(data) => (
          <dl class="stats">
            <div class="stat">
              <dt>Available</dt>
              <dd>{formatUsdString(data.balance_usd)}</dd>
            </div>
            <div class="stat">
              <dt>Reserved by calls in flight</dt>
              <dd>{formatUsdString(data.reserved_usd)}</dd>
            </div>
            <div class="stat">
              <dt>Credited</dt>
              <dd>{formatUsdString(data.credited_usd)}</dd>
            </div>
            <div class="stat">
              <dt>Spent</dt>
              <dd>{formatUsdString(data.spent_usd)}</dd>
            </div>
          </dl>
        )}
      </ResourceView>
      {session.scope === 'master' && (
        <TopUpForm
          onDone={() => {
            balance.reload();
            history.reload();
          }}
        />
      )}
      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <ResourceView resource={history} what="the credit history" feature="Credit history">
          {(data) =>
            data.data.length === 0 ? (
              <Empty>{offset ? 'No more entries.' : 'No spend recorded yet.'}</Empty>
            ) : (
              <>
                <DataTable columns={['Time', 'Key', 'Model', 'Operation', 'Cost']}>
                  {data.data.map((entry) => (
                    <tr key={entry.request_id}>
                      <td>{formatTime(entry.created_at)}</td>
                      <td>
                        <code>{entry.key_alias}</code>
                      </td>
                      <td>{entry.model}</td>
                      <td>{entry.operation}</td>
                      <td>
                        {formatUsdString(entry.cost_usd)}
                        {entry.unpriced && <span class="tag">unpriced</span>}
                      </td>
                    </tr>
                  ))}
                </DataTable>
                <Pager offset={offset} pageSize={PAGE_SIZE} shown={data.data.length} hasMore={data.has_more} onOffset={setOffset} />
              </>
            )
          }
        </ResourceView>
      </section>
    </>
  );
}

export function CreditsPage() {
  return (
    <>
      <h1>Credits</h1>
      <OrgRequired>
        <CreditsView />
      </OrgRequired>
    </>
  );
}
