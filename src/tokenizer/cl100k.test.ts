import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { countTokens as referenceCount, decode as referenceDecode, encode as referenceEncode } from 'gpt-tokenizer/encoding/cl100k_base';
import { cl100k } from './cl100k.js';

// gpt-tokenizer is the reference; plain text only (no special tokens), as gw counts.
const PLAIN = { disallowedSpecial: new Set<string>() };

const SAMPLES = [
  '',
  'hello world',
  "I'm sure they'll say it's fine, we've seen THEY'RE and DON'T before.",
  'The quick brown fox jumps over the lazy dog. 1234567890 12 3',
  '    indented\n\n\tcode();\r\n  }\n',
  'function add(a, b) {\n  return a + b; // sum\n}\nconst x = add(1, 2) ?? 0;',
  '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hi"}],"max_tokens":16}',
  'Ünïcödé façade naïve résumé — “quotes” and ‘single’ … ellipsis',
  '日本語のテキストと中文文本，以及한국어 텍스트。',
  'emoji 👍🏽👨‍👩‍👧‍👦 🇫🇷 and symbols ∑∫√∞ ≠ ≤ ≥',
  'Ελληνικά και русский текст и العربية',
  'trailing spaces   \n   \n',
  '<|endoftext|> looks special but is text <|im_start|>',
  'a'.repeat(3000),
  'ab'.repeat(700) + ' ' + '🙂'.repeat(300),
  'https://example.com/path?query=1&x=y#frag user@example.com +1 (555) 123-4567',
  '\u0000\u0001 control \u200b zero-width \ufeff bom',
  'Numbers: 3.14159, 2,718, 1e10, 0x1F, -42, 1000000',
];

test('token counts and ids match the reference cl100k encoder on varied text', () => {
  const tokenizer = cl100k();
  for (const sample of SAMPLES) {
    assert.equal(tokenizer.countTokens(sample), referenceCount(sample, PLAIN), `count of ${JSON.stringify(sample.slice(0, 40))}`);
    assert.deepEqual(tokenizer.encode(sample), referenceEncode(sample, PLAIN), `ids of ${JSON.stringify(sample.slice(0, 40))}`);
  }
});

test('token counts match the reference on this repository’s own sources and docs', () => {
  const tokenizer = cl100k();
  for (const file of ['README.md', 'docs/money.md', 'src/tokenizer/cl100k.ts', 'package-lock.json']) {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').slice(0, 60_000);
    assert.equal(tokenizer.countTokens(text), referenceCount(text, PLAIN), file);
  }
});

test('long single pieces (merged through the heap) give the reference ids, in the same order of merges', () => {
  const tokenizer = cl100k();
  // A seeded generator: the same pieces every run.
  let seed = 42;
  const random = () => ((seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
  const pick = (alphabet: string[], length: number) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const letters = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'];
  const punctuation = [...'!@#$%^&*()[]{};:,./<>?|~`-_=+"'];
  const wide = [...'éüßøπλжщ日本語中文한국'];
  const pieces = [
    pick(letters, 300),
    pick(letters, 4_000),
    pick(['a', 'b'], 2_500),
    pick(punctuation, 3_000),
    pick(wide, 1_500),
    ' ' + pick(letters, 1_000),
    'x'.repeat(257),
    'é'.repeat(129),
  ];
  for (const piece of pieces) {
    assert.deepEqual(tokenizer.encode(piece), referenceEncode(piece, PLAIN), `ids of ${JSON.stringify(piece.slice(0, 30))}… (${piece.length} chars)`);
  }
});

test('one very long word is counted (a single 200 KB piece: the merge is not quadratic)', () => {
  const tokenizer = cl100k();
  // 8 letters per token for a run of one letter, as the reference says for shorter runs.
  assert.equal(tokenizer.countTokens('a'.repeat(200_000)), 25_000);
  assert.equal(tokenizer.countTokens('!@#$%^&*'.repeat(25_000)), referenceCount('!@#$%^&*'.repeat(250), PLAIN) * 100);
});

test('decode inverts encode, and the generator never splits a character', () => {
  const tokenizer = cl100k();
  for (const sample of SAMPLES) {
    const tokens = tokenizer.encode(sample);
    assert.equal(tokenizer.decode(tokens), sample);
    assert.equal(tokenizer.decode(tokens), referenceDecode(tokens));
    const pieces = [...tokenizer.decodeGenerator(tokens)];
    assert.equal(pieces.join(''), sample);
    for (const piece of pieces) assert.ok(!piece.includes('\ufffd') || sample.includes('\ufffd'));
  }
});

test('a token id outside the vocabulary is a RangeError, not garbage', () => {
  assert.throws(() => cl100k().decode([15339, 100_256]), RangeError);
  assert.throws(() => cl100k().decode([-1]), RangeError);
  assert.throws(() => cl100k().decode([1.5]), RangeError);
});
