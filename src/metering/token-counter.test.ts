import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTokenCounter } from './token-counter.js';

function countingStandIn() {
  const calls: string[] = [];
  return { calls, countTokens: (text: string) => (calls.push(text), Math.ceil(text.length / 4)) };
}

test('token counter: a recurring string is counted once, a very short one every time', () => {
  const tokenizer = countingStandIn();
  const counter = createTokenCounter({ countTokens: tokenizer.countTokens });
  const systemPrompt = 'You are a concise assistant.';
  assert.equal(counter.count(systemPrompt), 7);
  assert.equal(counter.count(systemPrompt), 7);
  counter.count('hi');
  counter.count('hi');
  assert.deepEqual(tokenizer.calls, [systemPrompt, 'hi', 'hi']);
});

test('token counter: the cache holds at most cacheMaxChars characters, oldest out first', () => {
  const tokenizer = countingStandIn();
  const counter = createTokenCounter({ countTokens: tokenizer.countTokens, cacheMaxChars: 100 });
  const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((letter) => letter.repeat(letter < 'd' ? 20 : 25));
  for (const text of [a, b, c, d]) counter.count(text);
  assert.deepEqual(tokenizer.calls, [a, b, c, d]);
  // 85 characters are held; e (25) would make 110, so a (the oldest) goes.
  counter.count(e);
  counter.count(b);
  counter.count(a);
  assert.deepEqual(tokenizer.calls.slice(4), [e, a]);
});

test('token counter: a string longer than a quarter of the budget is never cached', () => {
  const tokenizer = countingStandIn();
  const counter = createTokenCounter({ countTokens: tokenizer.countTokens, cacheMaxChars: 100 });
  const long = 'x'.repeat(30);
  counter.count(long);
  counter.count(long);
  assert.deepEqual(tokenizer.calls, [long, long]);
});
