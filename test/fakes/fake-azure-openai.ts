import { splitForWire, lastUserText, startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/**
 * Azure OpenAI fake: `POST /openai/deployments/{deployment}/chat/completions?api-version=…` (and
 * `/completions`) with an `api-key` header. Answers `Echo: <last user text>`; the stream starts, as Azure's does, with a
 * chunk holding only `prompt_filter_results` and empty `choices`, and ends with a usage chunk when
 * stream_options.include_usage is set.
 */
export function startFakeAzureOpenAI(): Promise<FakeUpstream> {
  return startFakeUpstream((request) => {
    const url = new URL(request.url, 'http://placeholder');
    const match = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|completions)$/.exec(url.pathname);
    if (!match || request.method !== 'POST') return { status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
    if (!url.searchParams.get('api-version')) {
      return { status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
    }
    if (!request.headers['api-key']) {
      return { status: 401, body: { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } } };
    }
    const body = (request.json ?? {}) as { messages?: unknown; prompt?: unknown; stream?: boolean; stream_options?: { include_usage?: boolean } };
    const usage = { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 };
    const base = { id: 'chatcmpl-azure', created: 1_700_000_000, model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_azure' };
    if (match[2] === 'completions') {
      return {
        body: { ...base, id: 'cmpl-azure', object: 'text_completion', choices: [{ index: 0, text: ` continued: ${String(body.prompt)}`, finish_reason: 'length', logprobs: null }], usage },
      };
    }
    const text = `Echo: ${lastUserText(body.messages)}`;
    const filter = { hate: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };
    if (!body.stream) {
      return {
        body: {
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', content_filter_results: filter }],
          usage,
          prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }],
        },
      };
    }
    const chunk = (payload: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...payload })}\n\n`;
    const events = [
      `data: ${JSON.stringify({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }] })}\n\n`,
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
      ...text.split(/(?<= )/).map((piece) => chunk({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null, content_filter_results: filter }] })),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      ...(body.stream_options?.include_usage ? [chunk({ choices: [], usage })] : []),
      'data: [DONE]\n\n',
    ];
    return { headers: { 'content-type': 'text/event-stream' }, chunks: splitForWire(events.join('')) };
  });
}
