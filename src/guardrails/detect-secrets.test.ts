import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectSecrets } from './detect-secrets.js';

const types = (text: string) => detectSecrets(text).map((finding) => finding.type);

test('finds provider key formats', () => {
  assert.deepEqual(types('key sk-proj-abcdefghijklmnopqrstuvwxyz012345'), ['openai_key']);
  assert.deepEqual(types(`use sk-ant-api03-${'a1B2'.repeat(20)}`), ['anthropic_key']);
  assert.deepEqual(types('AKIAIOSFODNN7EXAMPLE'), ['aws_access_key']);
  assert.deepEqual(types(`ghp_${'A1b2C3d4E5'.repeat(4)}`), ['github_token']);
  assert.deepEqual(types('xoxb-1234567890-abcdefghij'), ['slack_token']);
  assert.deepEqual(types('AIzaSyA1234567890abcdefghijklmnopqrstuv'), ['google_api_key']);
  assert.deepEqual(types('sk_live_4eC39HqLyjWDarjtT1zdp7dc'), ['stripe_key']);
});

test('finds private key blocks and JWTs', () => {
  const key = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
  const found = detectSecrets(`here ${key} done`);
  assert.equal(found.length, 1);
  assert.equal(found[0].type, 'private_key');
  assert.equal(`here ${key} done`.slice(found[0].start, found[0].end), key);
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
  assert.deepEqual(types(`Authorization: ${jwt}`), ['jwt']);
});

test('flags high-entropy tokens only near context words', () => {
  assert.deepEqual(types('my password: X9f2kLq81ZmPq0vB7sTw'), ['secret']);
  assert.deepEqual(types('the weather: X9f2kLq81ZmPq0vB7sTw'), []);
  assert.deepEqual(types('the token is aaaaaaaaaaaaaaaaaaaaaaaa'), []);
  assert.deepEqual(detectSecrets('password: X9f2kLq81ZmPq0vB7sTw', { highEntropy: false }), []);
});

test('plain prose has no secrets', () => {
  assert.deepEqual(types('Ask the desk for a new key; secrets belong in the vault, tokens expire.'), []);
});

test('hostile input of about 1 MB is scanned correctly', () => {
  const size = 1 << 20;
  assert.equal(detectSecrets('eyJ'.repeat(size / 3)).length, 0);
  assert.equal(detectSecrets('-----BEGIN PRIVATE KEY-----'.repeat(size / 27)).length, 1);
  assert.equal(detectSecrets('sk-!'.repeat(size / 4)).length, 0);
  assert.equal(detectSecrets('secret '.repeat(size / 7)).length, 0);
  assert.equal(detectSecrets(`ghp_${'a'.repeat(35)}!`.repeat(size / 40)).length, 0);
});
