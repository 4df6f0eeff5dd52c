import { useEffect, useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { OrgRequired } from '../components/org-required.js';
import { Empty, ErrorMessage, ResourceView } from '../components/status-view.js';
import { formatTime } from '../format.js';
import { sideBySide } from '../line-diff.js';
import { usePage } from '../page-context.js';
import { pick, rowsOf, show } from '../pick.js';
import { useResource } from '../use-resource.js';

type Row = Record<string, unknown>;

/** A version's messages as editable-looking text: one "role: content" block per message. */
function versionText(version: Row | undefined): string {
  if (!version) return '';
  const messages = pick<unknown>(version, 'messages', 'template', 'content');
  if (typeof messages === 'string') return messages;
  if (!Array.isArray(messages)) return show(messages);
  return messages.map((message: Row) => `[${show(message.role)}]\n${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)}`).join('\n\n');
}

function versionsOf(info: Row): Row[] {
  const versions = pick<Row[]>(info, 'versions');
  if (Array.isArray(versions)) return [...versions].sort((a, b) => Number(pick(a, 'version')) - Number(pick(b, 'version')));
  return [info];
}

function VersionSelect(props: { label: string; numbers: number[]; value: number | undefined; onChange: (version: number) => void }) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(event) => props.onChange(Number(event.currentTarget.value))}>
        {props.numbers.map((number) => (
          <option key={number} value={number}>
            v{number}
          </option>
        ))}
      </select>
    </label>
  );
}

function DiffView({ before, after, left, right }: { before: string; after: string; left: string; right: string }) {
  const rows = sideBySide(before, after);
  return (
    <DataTable columns={[left, right]} class="diff" caption="Changes between versions">
      {rows.map((row, index) => (
        <tr key={index} class={row.kind}>
          <td>{row.left === null ? '' : <pre>{(row.kind === 'removed' || row.kind === 'changed' ? '− ' : '  ') + row.left}</pre>}</td>
          <td>{row.right === null ? '' : <pre>{(row.kind === 'added' || row.kind === 'changed' ? '+ ' : '  ') + row.right}</pre>}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function TryIt({ promptId, version }: { promptId: string; version: number }) {
  const { api } = usePage();
  const [variables, setVariables] = useState('{\n  \n}');
  const [output, setOutput] = useState<{ ok: boolean; text: string } | undefined>();
  async function render(event: Event) {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(variables);
    } catch {
      setOutput({ ok: false, text: 'The variables are not valid JSON.' });
      return;
    }
    try {
      const result = await api.send<Row>('POST', '/dashboard/api/prompt-render', { prompt_id: promptId, version, variables: parsed });
      setOutput({ ok: true, text: versionText(result) || JSON.stringify(result, null, 2) });
    } catch (caught) {
      const message = caught instanceof Error ? caught.message : String(caught);
      setOutput({ ok: false, text: message.startsWith('Unknown endpoint') ? 'Rendering is not available on this gateway.' : `Could not render: ${message}` });
    }
  }
  return (
    <form class="panel" onSubmit={render} aria-labelledby="try-heading">
      <h3 id="try-heading">Try it: render version {version}</h3>
      <label>
        Variables (JSON)
        <textarea rows={4} value={variables} onInput={(event) => setVariables(event.currentTarget.value)} />
      </label>
      <button type="submit">Render</button>
      {output && (output.ok ? <pre class="rendered">{output.text}</pre> : <ErrorMessage message={output.text} />)}
    </form>
  );
}

function PromptDetail({ promptId }: { promptId: string }) {
  const { api, orgId } = usePage();
  const info = useResource(() => api.get<Row>('/gw/prompt/info', { prompt_id: promptId }), [promptId, orgId]);
  const [left, setLeft] = useState<number | undefined>();
  const [right, setRight] = useState<number | undefined>();
  const versions = info.state === 'ready' ? versionsOf(info.data) : [];
  const numbers = versions.map((version) => Number(pick(version, 'version') ?? 1));
  useEffect(() => {
    if (numbers.length === 0) return;
    setRight(numbers[numbers.length - 1]);
    setLeft(numbers[Math.max(0, numbers.length - 2)]);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [info.state, promptId]);
  const byNumber = (number: number | undefined) => versions.find((version) => Number(pick(version, 'version') ?? 1) === number);
  return (
    <ResourceView resource={info} what="the prompt">
      {(data) => (
        <section class="panel" aria-labelledby="prompt-heading">
          <h2 id="prompt-heading">{show(pick(data, 'name'))}</h2>
          <p class="hint">{show(pick(data, 'description'))}</p>
          <DataTable columns={['Version', 'Model', 'Created']} class="compact" caption="Versions">
            {versions.map((version) => (
              <tr key={show(pick(version, 'version'))}>
                <td>{show(pick(version, 'version'))}</td>
                <td>{show(pick(version, 'model'))}</td>
                <td>{formatTime(pick<number | string>(version, 'created_at'))}</td>
              </tr>
            ))}
          </DataTable>
          <div class="toolbar">
            <VersionSelect label="Compare" numbers={numbers} value={left} onChange={setLeft} />
            <VersionSelect label="with" numbers={numbers} value={right} onChange={setRight} />
          </div>
          {left !== undefined && right !== undefined && <DiffView before={versionText(byNumber(left))} after={versionText(byNumber(right))} left={`v${left}`} right={`v${right}`} />}
          {right !== undefined && <TryIt promptId={promptId} version={right} />}
        </section>
      )}
    </ResourceView>
  );
}

function PromptsView() {
  const { api, orgId } = usePage();
  const [selected, setSelected] = useState<string | undefined>();
  const list = useResource(() => api.get<unknown>('/gw/prompt/list'), [orgId]);
  return (
    <div class="split">
      <section aria-labelledby="prompt-list-heading">
        <h2 id="prompt-list-heading">Templates</h2>
        <ResourceView resource={list} what="prompt templates" feature="Prompt templates">
          {(body) => {
            const rows = rowsOf(body);
            if (rows.length === 0) return <Empty>No prompt templates yet.</Empty>;
            return (
              <ul class="plain menu">
                {rows.map((row) => {
                  const id = show(pick(row, 'id', 'prompt_id'));
                  return (
                    <li key={id}>
                      <button type="button" aria-pressed={selected === id} onClick={() => setSelected(id)}>
                        {show(pick(row, 'name'))} <span class="hint">v{show(pick(row, 'latest_version', 'version'))}</span>
                      </button>
                    </li>
                  );
                })}
              </ul>
            );
          }}
        </ResourceView>
      </section>
      {selected ? <PromptDetail promptId={selected} /> : <p class="status">Choose a template to see its versions.</p>}
    </div>
  );
}

export function PromptsPage() {
  return (
    <>
      <h1>Prompts</h1>
      <OrgRequired>
        <PromptsView />
      </OrgRequired>
    </>
  );
}
