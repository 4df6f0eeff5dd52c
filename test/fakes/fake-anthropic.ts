import { lastUserText, splitForWire, sseEvent, startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

interface MessagesBody {
  model?: string;
  stream?: boolean;
  messages?: unknown;
  tools?: Array<{ name: string }>;
  tool_choice?: { type?: string };
}

/**
 * Anthropic Messages API fake. Answers `Echo: <last user text>`; when tools are offered and the
 * last turn is not a tool result, calls the first tool with `{"city":"Paris"}`. Usage is fixed:
 * 12 input, 3 cache-read, 7 output tokens.
 */
export function startFakeAnthropic(): Promise<FakeUpstream> {
  return startFakeUpstream((request) => {
    if (request.method !== 'POST' || !request.url.startsWith('/v1/messages')) return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'Not found' } } };
    if (!request.headers['x-api-key'] || request.headers['anthropic-version'] !== '2023-06-01') {
      return { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } };
    }
    const body = (request.json ?? {}) as MessagesBody;
    const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: Array<{ type?: string }> }>) : [];
    const lastBlocks = messages.at(-1)?.content ?? [];
    const callTool = (body.tools?.length ?? 0) > 0 && body.tool_choice?.type !== 'none' && !lastBlocks.some((block) => block.type === 'tool_result');
    const text = `Echo: ${lastUserText(body.messages)}`;
    const usage = { input_tokens: 12, cache_read_input_tokens: 3, cache_creation_input_tokens: 0, output_tokens: 7 };
    const tool = callTool ? { type: 'tool_use', id: 'toolu_fake_1', name: body.tools![0].name, input: { city: 'Paris' } } : undefined;
    if (!body.stream) {
      return {
        body: {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: tool ? [tool] : [{ type: 'text', text }],
          stop_reason: tool ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage,
        },
      };
    }
    const events = [
      sseEvent({ type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', content: [], model: body.model, stop_reason: null, usage: { ...usage, output_tokens: 1 } } }, 'message_start'),
      sseEvent({ type: 'ping' }, 'ping'),
    ];
    if (tool) {
      events.push(
        sseEvent({ type: 'content_block_start', index: 0, content_block: { ...tool, input: {} } }, 'content_block_start'),
        sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } }, 'content_block_delta'),
        sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ' "Paris"}' } }, 'content_block_delta'),
      );
    } else {
      events.push(sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'));
      for (const word of text.split(/(?<= )/)) {
        events.push(sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }, 'content_block_delta'));
      }
    }
    events.push(
      sseEvent({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
      sseEvent({ type: 'message_delta', delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }, 'message_delta'),
      sseEvent({ type: 'message_stop' }, 'message_stop'),
    );
    return { headers: { 'content-type': 'text/event-stream' }, chunks: splitForWire(events.join('')) };
  });
}
