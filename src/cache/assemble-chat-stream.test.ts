import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatCompletionChunk } from '../protocol/chat.js';
import { createChatStreamAssembler } from './assemble-chat-stream.js';
import { canReplayAsStream, replayChatCompletion } from './replay-chat-completion.js';

const base = { id: 'chatcmpl-s', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
const chunk = (choice: Record<string, unknown>): ChatCompletionChunk => ({ ...base, choices: [{ index: 0, finish_reason: null, delta: {}, ...choice }] }) as ChatCompletionChunk;

function assemble(chunks: ChatCompletionChunk[]) {
  const assembler = createChatStreamAssembler();
  for (const each of chunks) assembler.add(each);
  return assembler.finish();
}

test('a streamed legacy function call is assembled from its name and argument fragments', () => {
  const completion = assemble([
    chunk({ delta: { role: 'assistant', content: null, function_call: { name: 'get_', arguments: '' } } }),
    chunk({ delta: { function_call: { name: 'weather', arguments: '{"city":' } } }),
    chunk({ delta: { function_call: { arguments: '"Paris"}' } } }),
    chunk({ delta: {}, finish_reason: 'function_call' }),
  ]);
  const message = completion?.choices[0].message as Record<string, unknown>;
  assert.deepEqual(message.function_call, { name: 'get_weather', arguments: '{"city":"Paris"}' });
  assert.equal(message.content, null);
  assert.equal(completion?.choices[0].finish_reason, 'function_call');
});

test('logprobs slices are concatenated per choice', () => {
  const token = (text: string) => ({ token: text, logprob: -0.1, bytes: null, top_logprobs: [] });
  const completion = assemble([
    chunk({ delta: { role: 'assistant', content: '' }, logprobs: null }),
    chunk({ delta: { content: 'Hel' }, logprobs: { content: [token('Hel')], refusal: null } }),
    chunk({ delta: { content: 'lo' }, logprobs: { content: [token('lo')], refusal: null } }),
    chunk({ delta: {}, finish_reason: 'stop' }),
  ]);
  assert.equal(completion?.choices[0].message.content, 'Hello');
  assert.deepEqual(completion?.choices[0].logprobs, { content: [token('Hel'), token('lo')], refusal: null });
});

test('a choice field the completion cannot hold (audio) makes the answer unstorable; null and empty fields do not', () => {
  assert.equal(
    assemble([chunk({ delta: { role: 'assistant', audio: { id: 'audio_1', data: 'UklGR' } } }), chunk({ delta: {}, finish_reason: 'stop' })]),
    undefined,
  );
  assert.equal(assemble([chunk({ delta: { content: 'x', reasoning_content: 'think' } }), chunk({ delta: {}, finish_reason: 'stop' })]), undefined);
  assert.equal(assemble([chunk({ delta: { content: 'x' }, logprobs: { content: [], surprise: [1] } }), chunk({ delta: {}, finish_reason: 'stop' })]), undefined);
  const plain = assemble([chunk({ delta: { content: 'x', audio: null, annotations: [] } }), chunk({ delta: {}, finish_reason: 'stop' })]);
  assert.equal(plain?.choices[0].message.content, 'x');
});

test('a stored function call and logprobs are replayed as a stream carries them', () => {
  const logprobs = { content: [{ token: 'x', logprob: -1, bytes: null, top_logprobs: [] }], refusal: null };
  const completion = assemble([
    chunk({ delta: { role: 'assistant', content: 'x' }, logprobs }),
    chunk({ delta: { function_call: { name: 'f', arguments: '{}' } } }),
    chunk({ delta: {}, finish_reason: 'function_call' }),
  ])!;
  const replayed = replayChatCompletion(completion, false).map((event) => event.chunk!);
  assert.deepEqual(assemble(replayed), completion, 'the replay assembles back to the stored answer');
});

test('an answer with parts a stream cannot carry is not replayable as a stream', () => {
  const answer = (message: Record<string, unknown>) => ({ ...base, object: 'chat.completion' as const, choices: [{ index: 0, message: { role: 'assistant' as const, content: 'x', ...message }, finish_reason: 'stop' as const }] });
  assert.equal(canReplayAsStream(answer({ audio: null, annotations: [] })), true);
  assert.equal(canReplayAsStream(answer({ audio: { id: 'a', data: 'UklGR', transcript: 'x' } })), false);
  assert.equal(canReplayAsStream(answer({ annotations: [{ type: 'url_citation' }] })), false);
});
