import { useState } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.js';
import { OrgRequired } from '../components/org-required.js';
import { Empty, ErrorMessage, ResourceView } from '../components/status-view.js';
import { formatMs, formatTime } from '../format.js';
import { usePage } from '../page-context.js';
import { useResource } from '../use-resource.js';

interface Channel {
  id: string;
  name: string;
  channel_type: string;
  is_active: boolean;
  config: Record<string, unknown>;
}

interface TestResult {
  delivered: boolean;
  status: number | null;
  error: string | null;
  latency_ms: number;
}

interface Delivery {
  id: string;
  time: string;
  event_kind: string;
  severity: string;
  status: string;
  http_status: number | null;
  latency_ms: number | null;
  error: string | null;
  test: boolean;
}

const FIELDS: Record<string, { name: string; label: string; type?: string; optional?: boolean }[]> = {
  webhook: [
    { name: 'url', label: 'HTTPS URL', type: 'url' },
    { name: 'secret', label: 'Signing secret (optional)', type: 'password', optional: true },
  ],
  slack: [{ name: 'webhook_url', label: 'Slack incoming-webhook URL', type: 'url' }],
  teams: [{ name: 'webhook_url', label: 'Teams incoming-webhook URL', type: 'url' }],
  email: [{ name: 'to', label: 'Recipients (comma-separated)' }],
  jira: [
    { name: 'site_url', label: 'Jira site URL', type: 'url' },
    { name: 'project_key', label: 'Project key' },
    { name: 'issue_type', label: 'Issue type', optional: true },
    { name: 'email', label: 'Account email', type: 'email' },
    { name: 'api_token', label: 'API token', type: 'password' },
  ],
};

function CreateChannelForm({ onCreated }: { onCreated: () => void }) {
  const { api } = usePage();
  const [type, setType] = useState('webhook');
  const [error, setError] = useState<string | undefined>();
  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const config: Record<string, unknown> = {};
    for (const field of FIELDS[type]) {
      const value = String(form.get(field.name) ?? '').trim();
      if (!value) continue;
      config[field.name] = field.name === 'to' ? value.split(',').map((item) => item.trim()) : value;
    }
    setError(undefined);
    try {
      await api.send('POST', '/gw/channels', { name: String(form.get('name')).trim(), channel_type: type, config, is_active: form.get('active') !== null });
      (event.target as HTMLFormElement).reset();
      setType('webhook');
      onCreated();
    } catch (caught) {
      setError(`The channel was not created: ${caught instanceof Error ? caught.message : String(caught)}`);
    }
  }
  return (
    <form class="panel grid-form" onSubmit={submit} aria-labelledby="create-channel-heading">
      <h2 id="create-channel-heading">Create a channel</h2>
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      <label>
        Type
        <select name="type" value={type} onChange={(event) => setType(event.currentTarget.value)}>
          {Object.keys(FIELDS).map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      {FIELDS[type].map((field) => (
        <label key={`${type}-${field.name}`}>
          {field.label}
          <input name={field.name} type={field.type ?? 'text'} required={!field.optional} autoComplete="off" />
        </label>
      ))}
      <label class="checkbox">
        <input type="checkbox" name="active" defaultChecked /> Active
      </label>
      <div class="wide">
        <button type="submit">Create channel</button>
      </div>
      {error && (
        <div class="wide">
          <ErrorMessage message={error} />
        </div>
      )}
    </form>
  );
}

function DeliveryLog({ channelId, generation }: { channelId: string; generation: number }) {
  const { api, orgId } = usePage();
  const log = useResource(() => api.get<{ data: Delivery[] }>(`/gw/channels/${channelId}/deliveries`, { limit: 20 }), [channelId, orgId, generation]);
  return (
    <ResourceView resource={log} what="the delivery log">
      {({ data }) =>
        data.length === 0 ? (
          <Empty>No deliveries yet.</Empty>
        ) : (
          <table class="compact">
            <caption>Recent deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Result</th>
                <th scope="col">Latency</th>
              </tr>
            </thead>
            <tbody>
              {data.map((entry) => (
                <tr key={entry.id}>
                  <td>{formatTime(entry.time)}</td>
                  <td>
                    {entry.event_kind}
                    {entry.test ? ' (test)' : ''}
                  </td>
                  <td>
                    {entry.status}
                    {entry.http_status ? ` (HTTP ${entry.http_status})` : ''}
                    {entry.error ? `: ${entry.error}` : ''}
                  </td>
                  <td>{formatMs(entry.latency_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </ResourceView>
  );
}

function ChannelItem({ channel, onChanged }: { channel: Channel; onChanged: () => void }) {
  const { api } = usePage();
  const [result, setResult] = useState<{ ok: boolean; text: string } | undefined>();
  const [testing, setTesting] = useState(false);
  const [showLog, setShowLog] = useState(false);
  const [generation, setGeneration] = useState(0);
  async function test() {
    setTesting(true);
    setResult(undefined);
    try {
      const outcome = await api.send<TestResult>('POST', `/gw/channels/${channel.id}/test`);
      setResult({
        ok: outcome.delivered,
        text: outcome.delivered
          ? `Delivered${outcome.status ? ` (HTTP ${outcome.status})` : ''} in ${formatMs(outcome.latency_ms)}.`
          : `Not delivered${outcome.status ? ` (HTTP ${outcome.status})` : ''}: ${outcome.error ?? 'no reason given'}.`,
      });
      setGeneration((value) => value + 1);
    } catch (caught) {
      setResult({ ok: false, text: `The test could not run: ${caught instanceof Error ? caught.message : String(caught)}` });
    } finally {
      setTesting(false);
    }
  }
  return (
    <li class="panel channel" data-channel-id={channel.id}>
      <div class="section-head">
        <h3>
          {channel.name} <span class="tag">{channel.channel_type}</span> {!channel.is_active && <span class="tag revoked">inactive</span>}
        </h3>
        <div class="actions">
          <button type="button" onClick={test} disabled={testing}>
            {testing ? 'Sending test…' : 'Send test'}
          </button>
          <button type="button" aria-expanded={showLog} onClick={() => setShowLog(!showLog)}>
            {showLog ? 'Hide delivery log' : 'Delivery log'}
          </button>
          <ConfirmButton
            label="Delete"
            confirmLabel="Yes, delete"
            question={`Delete ${channel.name}?`}
            onConfirm={async () => {
              await api.send('DELETE', `/gw/channels/${channel.id}`);
              onChanged();
            }}
          />
        </div>
      </div>
      <p class="hint">{Object.entries(channel.config).map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`).join(' · ')}</p>
      {result && (
        <p class={`status ${result.ok ? 'ok' : 'error'}`} role="status" data-testid="channel-test-result">
          {result.text}
        </p>
      )}
      {showLog && <DeliveryLog channelId={channel.id} generation={generation} />}
    </li>
  );
}

function ChannelsView() {
  const { api, orgId } = usePage();
  const channels = useResource(() => api.get<{ data: Channel[] }>('/gw/channels'), [orgId]);
  return (
    <>
      <CreateChannelForm onCreated={channels.reload} />
      <section aria-labelledby="channel-list-heading">
        <h2 id="channel-list-heading">Channels</h2>
        <ResourceView resource={channels} what="alert channels" feature="Alert channels">
          {({ data }) =>
            data.length === 0 ? (
              <Empty>No channels yet. Budget threshold alerts reach the channels you create here.</Empty>
            ) : (
              <ul class="plain">
                {data.map((channel) => (
                  <ChannelItem key={channel.id} channel={channel} onChanged={channels.reload} />
                ))}
              </ul>
            )
          }
        </ResourceView>
      </section>
    </>
  );
}

export function ChannelsPage() {
  return (
    <>
      <h1>Channels</h1>
      <OrgRequired>
        <ChannelsView />
      </OrgRequired>
    </>
  );
}
