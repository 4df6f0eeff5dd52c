import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withTimeout } from './with-timeout.js';

test('withTimeout: the answer when it comes in time, the named error when it does not', async () => {
  assert.equal(await withTimeout(Promise.resolve(7), 1_000, 'late'), 7);
  await assert.rejects(withTimeout(Promise.reject(new Error('refused')), 1_000, 'late'), /refused/);
  await assert.rejects(withTimeout(new Promise(() => {}), 10, 'store did not answer within 10 ms'), /store did not answer within 10 ms/);
});
