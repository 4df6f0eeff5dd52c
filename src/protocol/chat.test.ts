import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatRequestSchema } from './chat.js';

const TOOL_CALL = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };

/** The path of the first problem zod finds in a chat body with these messages, or undefined if it is valid. */
function problemAt(messages: unknown[]): string | undefined {
  const result = chatRequestSchema.safeParse({ model: 'm', messages });
  return result.success ? undefined : result.error.issues[0]!.path.join('.');
}

test('chat: content is required for system, developer, user and tool messages: a string or a non-empty array of parts', () => {
  for (const role of ['system', 'developer', 'user', 'tool']) {
    assert.equal(problemAt([{ role }]), 'messages.0.content', `${role} without content`);
    assert.equal(problemAt([{ role, content: null }]), 'messages.0.content', `${role} with null content`);
    assert.equal(problemAt([{ role, content: [] }]), 'messages.0.content', `${role} with no parts`);
    assert.equal(problemAt([{ role, content: '' }]), undefined);
    assert.equal(problemAt([{ role, content: [{ type: 'text', text: 'x' }] }]), undefined);
  }
});

test("chat: a text part's text must be a string; other part types pass as they are", () => {
  assert.equal(problemAt([{ role: 'user', content: [{ type: 'text', text: 5 }] }]), 'messages.0.content.0.text');
  assert.equal(problemAt([{ role: 'user', content: [{ type: 'text' }] }]), 'messages.0.content.0.text');
  assert.equal(problemAt([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }]), undefined);
  assert.equal(problemAt([{ role: 'assistant', content: [{ type: 'refusal', refusal: 7 }] }]), 'messages.0.content.0.refusal');
});

test('chat: an assistant message may leave content null or out only when it calls tools, a function, or refuses', () => {
  assert.equal(problemAt([{ role: 'assistant' }]), 'messages.0.content');
  assert.equal(problemAt([{ role: 'assistant', content: null }]), 'messages.0.content');
  assert.equal(problemAt([{ role: 'assistant', content: null, tool_calls: [] }]), 'messages.0.content');
  assert.equal(problemAt([{ role: 'assistant', content: null, tool_calls: [TOOL_CALL] }]), undefined);
  assert.equal(problemAt([{ role: 'assistant', tool_calls: [TOOL_CALL] }]), undefined);
  assert.equal(problemAt([{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }]), undefined);
  assert.equal(problemAt([{ role: 'assistant', content: null, refusal: 'I cannot help with that.' }]), undefined);
  assert.equal(problemAt([{ role: 'function', name: 'f', content: null }]), undefined, 'a function result may be null');
  assert.equal(problemAt([{ role: 'function', name: 'f' }]), 'messages.0.content');
});
