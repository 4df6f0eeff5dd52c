import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tapStream } from './tap-stream.js';

/** A source that records whether it was closed early. */
function source<T>(items: T[], options: { failAfter?: number } = {}) {
  const state = { closed: false, pulled: 0 };
  async function* generate() {
    try {
      for (const item of items) {
        if (options.failAfter !== undefined && state.pulled === options.failAfter) throw new Error('upstream broke');
        state.pulled += 1;
        yield item;
      }
    } finally {
      state.closed = true;
    }
  }
  return { iterable: generate(), state };
}

test('tapStream: every item is seen (and may be replaced); onEnd runs once, awaited, after the last item', async () => {
  const { iterable } = source([1, 2, 3]);
  const seen: number[] = [];
  const ends: unknown[] = [];
  let endFinished = false;
  const tapped = tapStream(iterable, {
    onItem: (item) => {
      seen.push(item);
      return item === 2 ? 20 : undefined;
    },
    onEnd: async (outcome) => {
      ends.push(outcome);
      await new Promise((resolve) => setImmediate(resolve));
      endFinished = true;
    },
  });
  const out: number[] = [];
  for await (const item of tapped) out.push(item);
  assert.deepEqual(out, [1, 20, 3]);
  assert.deepEqual(seen, [1, 2, 3]);
  assert.deepEqual(ends, [{ completed: true, error: undefined }]);
  assert.equal(endFinished, true, 'the loop ends only after onEnd has finished');
  assert.deepEqual(await tapped.next(), { done: true, value: undefined });
  assert.equal(ends.length, 1);
});

test('tapStream: a failing source reaches the consumer after onEnd saw the error', async () => {
  const { iterable } = source([1, 2, 3], { failAfter: 1 });
  const ends: Array<{ completed: boolean; error?: unknown }> = [];
  const tapped = tapStream(iterable, { onEnd: (outcome) => void ends.push(outcome) });
  const out: number[] = [];
  await assert.rejects(async () => {
    for await (const item of tapped) out.push(item);
  }, /upstream broke/);
  assert.deepEqual(out, [1]);
  assert.equal(ends.length, 1);
  assert.equal(ends[0]!.completed, false);
  assert.match(String(ends[0]!.error), /upstream broke/);
});

test('tapStream: a consumer that stops early closes the source, then onEnd runs with completed false', async () => {
  const { iterable, state } = source([1, 2, 3]);
  const events: string[] = [];
  const tapped = tapStream(iterable, {
    onEnd: (outcome) => {
      events.push(`end completed=${outcome.completed} sourceClosed=${state.closed}`);
    },
  });
  for await (const item of tapped) {
    events.push(`item ${item}`);
    if (item === 2) break;
  }
  assert.deepEqual(events, ['item 1', 'item 2', 'end completed=false sourceClosed=true']);
  assert.deepEqual(await tapped.next(), { done: true, value: undefined });
  assert.equal(events.length, 3);
});

test('tapStream: an observer that throws on an item ends the stream with that error, closes the source and reports it', async () => {
  const { iterable, state } = source([1, 2, 3]);
  const ends: Array<{ completed: boolean; error?: unknown }> = [];
  const tapped = tapStream(iterable, {
    onItem: (item) => {
      if (item === 2) throw new Error('observer refused');
    },
    onEnd: (outcome) => void ends.push(outcome),
  });
  const out: number[] = [];
  await assert.rejects(async () => {
    for await (const item of tapped) out.push(item);
  }, /observer refused/);
  assert.deepEqual(out, [1]);
  assert.equal(state.closed, true);
  assert.equal(ends.length, 1);
  assert.match(String(ends[0]!.error), /observer refused/);
});

test('tapStream: returned before the first item was asked for, nothing is read and onEnd does not run', async () => {
  const { iterable, state } = source([1]);
  let ended = false;
  const tapped = tapStream(iterable, { onEnd: () => void (ended = true) });
  assert.deepEqual(await tapped.return!(undefined), { done: true, value: undefined });
  assert.equal(state.pulled, 0);
  assert.equal(ended, false);
});

test('tapStream: a source that rejects with undefined still ends the stream as failed', async () => {
  const failing: AsyncIterable<number> = {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(undefined) }),
  };
  const ends: Array<{ completed: boolean }> = [];
  const tapped = tapStream(failing, { onEnd: (outcome) => void ends.push(outcome) });
  await assert.rejects(tapped.next(), (error) => error === undefined);
  assert.deepEqual(ends, [{ completed: false, error: undefined }]);
});
