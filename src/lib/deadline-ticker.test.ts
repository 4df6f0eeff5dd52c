import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { COARSE_FROM_MS, TICK_MS, startDeadline, tickerState } from './deadline-ticker.js';

test('a deadline under COARSE_FROM_MS is an exact Node timer: it expires on time, and not once cancelled', async () => {
  const fired: string[] = [];
  startDeadline(30, () => fired.push('kept'));
  startDeadline(30, () => fired.push('cancelled')).cancel();
  assert.equal(tickerState().running, false);
  await sleep(60);
  assert.deepEqual(fired, ['kept']);
});

test('a long deadline expires on the ticker, no sooner than asked and at most a tick late', async () => {
  const startedAt = performance.now();
  let expiredAt = 0;
  const kept = new Promise<void>((resolve) =>
    startDeadline(COARSE_FROM_MS, () => {
      expiredAt = performance.now();
      resolve();
    }),
  );
  const cancelled = startDeadline(COARSE_FROM_MS, () => assert.fail('a cancelled deadline expired'));
  cancelled.cancel();
  cancelled.cancel();
  assert.deepEqual(tickerState(), { live: 1, refed: 1, running: true });
  await kept;
  const elapsed = expiredAt - startedAt;
  assert.ok(elapsed >= COARSE_FROM_MS, `expired after ${elapsed} ms`);
  // A tick late at most, with room for a loaded machine's timer lag.
  assert.ok(elapsed < COARSE_FROM_MS + TICK_MS + 400, `expired after ${elapsed} ms`);
  // Nothing left to watch: the ticker stops at its next look.
  await sleep(TICK_MS * 2);
  assert.deepEqual(tickerState(), { live: 0, refed: 0, running: false });
});

test('deadlines cancelled and unref\'d keep the ticker\'s count of what holds the process exact', async () => {
  const deadlines = Array.from({ length: 5 }, () => startDeadline(60_000, () => assert.fail('expired')));
  assert.deepEqual(tickerState(), { live: 5, refed: 5, running: true });
  deadlines[0]!.unref();
  deadlines[0]!.unref();
  deadlines[1]!.unref();
  deadlines[1]!.cancel();
  deadlines[2]!.cancel();
  deadlines[2]!.unref();
  assert.deepEqual(tickerState(), { live: 3, refed: 2, running: true });
  for (const deadline of deadlines) deadline.cancel();
  assert.deepEqual(tickerState(), { live: 0, refed: 0, running: true });
  await sleep(TICK_MS * 2);
  assert.equal(tickerState().running, false);
});

test('a deadline started from an expiring one is watched like any other', async () => {
  const fired: string[] = [];
  await new Promise<void>((resolve) => {
    startDeadline(COARSE_FROM_MS, () => {
      fired.push('first');
      startDeadline(COARSE_FROM_MS, () => {
        fired.push('second');
        resolve();
      });
    });
  });
  assert.deepEqual(fired, ['first', 'second']);
});
