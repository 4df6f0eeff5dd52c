import { encodeEventStreamMessage } from '../../src/lib/aws-event-stream.js';
import { lastUserText, startFakeUpstream, type FakeReply, type FakeUpstream } from './fake-upstream.js';

const event = (type: string, payload: unknown) =>
  encodeEventStreamMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(payload));

/**
 * Bedrock runtime fake: /model/{id}/converse and /converse-stream (binary event stream, written
 * in pieces that cut through messages). Requires a SigV4 `authorization` (or bearer) header; the
 * signature itself is not verified (the signer is tested against AWS's vectors).
 */
export function startFakeBedrock(): Promise<FakeUpstream> {
  return startFakeUpstream((request): FakeReply => {
    const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(request.url);
    if (!match) return { status: 404, body: { message: 'Not found' }, headers: { 'x-amzn-errortype': 'ResourceNotFoundException' } };
    const authorization = String(request.headers.authorization ?? '');
    if (!authorization.startsWith('AWS4-HMAC-SHA256 Credential=') && !authorization.startsWith('Bearer ')) {
      return { status: 403, body: { message: 'Missing Authentication Token' }, headers: { 'x-amzn-errortype': 'AccessDeniedException' } };
    }
    const body = (request.json ?? {}) as { messages?: unknown };
    const text = `Echo: ${lastUserText(body.messages)}`;
    const usage = { inputTokens: 10, outputTokens: 4, totalTokens: 14 };
    if (match[2] === 'converse') {
      return { body: { output: { message: { role: 'assistant', content: [{ text }] } }, stopReason: 'end_turn', usage, metrics: { latencyMs: 5 } } };
    }
    const stream = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      ...text.split(/(?<= )/).map((piece) => event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } })),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('messageStop', { stopReason: 'end_turn' }),
      event('metadata', { usage, metrics: { latencyMs: 5 } }),
    ]);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < stream.length; offset += 29) chunks.push(stream.subarray(offset, offset + 29));
    return { headers: { 'content-type': 'application/vnd.amazon.eventstream' }, chunks };
  });
}
