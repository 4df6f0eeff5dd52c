import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withTimeout } from './with-timeout.js';

test('withTimeout: the answer when it comes in time, the named error when it does not', async () => {
  assert.equal(await withTimeout(Promise.resolve(7), 1_000, 'late'), 7);
  await assert.rejects(withTimeout(Promise.reject(new Error('refused')), 1_000, 'late'), /refused/);
  await assert.rejects(withTimeout(new Promise(() => {}), 10, 'store did not answer within 10 ms'), /store did not answer within 10 ms/);
});

test('withTimeout: of many calls with one duration, exactly the unanswered ones are rejected, each with its own message', async () => {
  const calls = Array.from({ length: 3000 }, (_, index) => {
    // Every third call never answers; the others answer at once or a turn later.
    const answer = index % 3 === 0 ? new Promise<number>(() => {}) : index % 3 === 1 ? Promise.resolve(index) : new Promise<number>((resolve) => setImmediate(() => resolve(index)));
    return withTimeout(answer, 20, `call ${index} late`).then(
      (value) => ({ index, value }),
      (error: Error) => ({ index, error: error.message }),
    );
  });
  const outcomes = await Promise.all(calls);
  for (const outcome of outcomes) {
    if (outcome.index % 3 === 0) assert.deepEqual(outcome, { index: outcome.index, error: `call ${outcome.index} late` });
    else assert.deepEqual(outcome, { index: outcome.index, value: outcome.index });
  }
});

test('withTimeout: calls with different durations each time out on their own; a late answer after the rejection changes nothing', async () => {
  let answerLate: (value: string) => void = () => {};
  const late = withTimeout(new Promise<string>((resolve) => (answerLate = resolve)), 15, 'short');
  const slowButInTime = withTimeout(new Promise<string>((resolve) => setTimeout(() => resolve('in time'), 30)), 400, 'long');
  const never = withTimeout(new Promise<string>(() => {}), 60, 'never');
  await assert.rejects(late, /^Error: short$/);
  answerLate('too late');
  assert.equal(await slowButInTime, 'in time');
  await assert.rejects(never, /^Error: never$/);
  // The queue keeps working after it has emptied.
  assert.equal(await withTimeout(Promise.resolve('again'), 15, 'late'), 'again');
  await assert.rejects(withTimeout(new Promise(() => {}), 15, 'late again'), /late again/);
});
