import { useState } from 'preact/hooks';
import { ApiError } from '../api-client.js';
import { BudgetBar } from '../components/budget-bar.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { DataTable } from '../components/data-table.js';
import { Empty, ErrorMessage, ResourceView } from '../components/status-view.js';
import { formatTime, usdToNanos } from '../format.js';
import { usePage } from '../page-context.js';
import { useResource } from '../use-resource.js';

interface KeyRecord {
  id: string;
  org_id: string;
  team_id: string | null;
  name: string;
  key_alias: string;
  role: string;
  status: string;
  budget: { limit_usd: string; period: string } | null;
  limits: { rpm?: number; tpm?: number };
  allowed_models: string[] | null;
  last_used_at: number | null;
}

interface Team {
  id: string;
  name: string;
}

function CreateKeyForm({ teams, onCreated }: { teams: Team[]; onCreated: (secret: string) => void }) {
  const { api, orgId, session } = usePage();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const budget = text('budget');
    const models = text('models');
    const limits: Record<string, number> = {};
    if (text('rpm')) limits.rpm = Number(text('rpm'));
    if (text('tpm')) limits.tpm = Number(text('tpm'));
    const body = {
      ...(session.scope === 'master' ? { org_id: orgId } : {}),
      name: text('name'),
      team_id: text('team') || null,
      role: form.get('org_admin') ? 'org_admin' : 'inference',
      budget: budget ? { limit_usd: budget, period: text('period') || 'none' } : null,
      limits,
      allowed_models: models ? models.split(',').map((model) => model.trim()).filter(Boolean) : null,
    };
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.send<{ key: string }>('POST', '/api/admin/keys', body);
      (event.target as HTMLFormElement).reset();
      onCreated(created.key);
    } catch (caught) {
      setError(caught instanceof ApiError ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="panel grid-form" onSubmit={submit} aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      <label>
        Team
        <select name="team">
          <option value="">No team</option>
          {teams.map((team) => (
            <option key={team.id} value={team.id}>
              {team.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Budget (USD)
        <input name="budget" inputMode="decimal" pattern="\d+(\.\d{1,9})?" placeholder="e.g. 25.00" />
      </label>
      <label>
        Budget period
        <select name="period">
          <option value="none">Lifetime</option>
          <option value="daily">Daily</option>
          <option value="weekly">Weekly</option>
          <option value="monthly">Monthly</option>
        </select>
      </label>
      <label>
        Requests per minute
        <input name="rpm" type="number" min={1} step={1} />
      </label>
      <label>
        Tokens per minute
        <input name="tpm" type="number" min={1} step={1} />
      </label>
      <label class="wide">
        Allowed models (comma-separated; empty allows all)
        <input name="models" placeholder="e.g. local-chat, local-embed" />
      </label>
      <label class="checkbox wide">
        <input type="checkbox" name="org_admin" /> Org-admin key (can sign in here and manage this organization)
      </label>
      <div class="wide">
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
      {error && (
        <div class="wide">
          <ErrorMessage message={`The key was not created: ${error}`} />
        </div>
      )}
    </form>
  );
}

function NewKeyNotice({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <section class="panel notice" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Your new key</h2>
      <p>
        <strong>Copy it now: you will not see this again.</strong> Only its last four characters are kept for display.
      </p>
      <p class="secret-row">
        <label for="new-key-value" class="visually-hidden">
          New key
        </label>
        <input id="new-key-value" class="secret" readOnly value={secret} onFocus={(event) => event.currentTarget.select()} />
        <CopyButton text={secret} label="Copy key" />
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

export function KeysPage() {
  const { api, orgId, session } = usePage();
  const [secret, setSecret] = useState<string | undefined>();
  const [actionError, setActionError] = useState<string | undefined>();
  const keys = useResource(() => api.get<{ data: KeyRecord[] }>('/api/admin/keys', { org_id: orgId }), [orgId]);
  const spend = useResource(() => api.get<{ data: { key_id: string; cost_nanos: number }[] }>('/api/admin/usage/keys', { org_id: orgId }), [orgId]);
  const teams = useResource(() => (orgId ? api.get<{ data: Team[] }>(`/api/admin/orgs/${orgId}/teams`) : Promise.resolve({ data: [] as Team[] })), [orgId]);
  const teamList = teams.state === 'ready' ? teams.data.data : [];
  const teamName = (id: string | null) => (id ? (teamList.find((team) => team.id === id)?.name ?? id) : '—');
  // Undefined until the spend has loaded (or when it failed to), so no key shows a $0 it may not have.
  const spendOf = (id: string) => (spend.state === 'ready' ? (spend.data.data.find((row) => row.key_id === id)?.cost_nanos ?? 0) : undefined);

  async function revoke(key: KeyRecord) {
    setActionError(undefined);
    try {
      await api.send('POST', `/api/admin/keys/${key.id}/revoke`);
      keys.reload();
    } catch (caught) {
      setActionError(`Could not revoke ${key.name}: ${caught instanceof Error ? caught.message : String(caught)}`);
    }
  }

  return (
    <>
      <h1>Keys</h1>
      {secret && <NewKeyNotice secret={secret} onDone={() => setSecret(undefined)} />}
      {orgId || session.scope === 'org' ? (
        <CreateKeyForm
          teams={teamList}
          onCreated={(created) => {
            setSecret(created);
            keys.reload();
          }}
        />
      ) : (
        <p class="status">Choose an organization above to create keys in it.</p>
      )}
      {actionError && <ErrorMessage message={actionError} />}
      <section aria-labelledby="key-list-heading">
        <h2 id="key-list-heading">All keys</h2>
        <ResourceView resource={keys} what="keys">
          {({ data }) =>
            data.length === 0 ? (
              <Empty>No keys yet. Create one above.</Empty>
            ) : (
              <DataTable columns={['Name', 'Key', 'Team', 'Status', 'Spend', 'Limits', 'Last used', { hidden: 'Actions' }]} class="keys">
                {data.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <td>
                      {key.name}
                      {key.role === 'org_admin' && <span class="tag">org admin</span>}
                    </td>
                    <td>
                      <code>{key.key_alias}</code>
                    </td>
                    <td>{teamName(key.team_id)}</td>
                    <td>
                      <span class={`tag ${key.status}`}>{key.status}</span>
                    </td>
                    <td>
                      <BudgetBar spentNanos={spendOf(key.id)} limitNanos={key.budget ? usdToNanos(key.budget.limit_usd) : null} />
                      {key.budget && key.budget.period !== 'none' && <span class="hint"> ({key.budget.period})</span>}
                    </td>
                    <td>
                      {key.limits.rpm ? `${key.limits.rpm} RPM` : 'tier RPM'}
                      {', '}
                      {key.limits.tpm ? `${key.limits.tpm} TPM` : 'tier TPM'}
                    </td>
                    <td>{formatTime(key.last_used_at)}</td>
                    <td>
                      {key.status === 'active' && (
                        <ConfirmButton label="Revoke" confirmLabel="Yes, revoke" question={`Revoke ${key.name}? Calls with it fail at once.`} onConfirm={() => revoke(key)} />
                      )}
                    </td>
                  </tr>
                ))}
              </DataTable>
            )
          }
        </ResourceView>
      </section>
    </>
  );
}
