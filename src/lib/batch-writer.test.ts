import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBatchWriter } from './batch-writer.js';

test('close keeps retrying while the database is away and lands every row when it returns', async () => {
  const written: number[] = [];
  let available = false;
  const writer = createBatchWriter<number>({
    intervalMs: 60_000,
    maxBatch: 2,
    closeTimeoutMs: 10_000,
    async write(items) {
      if (!available) throw new Error('database away');
      written.push(...items);
    },
  });
  for (let item = 1; item <= 5; item++) writer.add(item);
  const closing = writer.close();
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(written, []);
  available = true;
  await closing;
  assert.deepEqual(written, [1, 2, 3, 4, 5]);
  assert.equal(writer.pending, 0);
});

test('close gives up after its timeout and reports what is lost', async () => {
  let dropped = 0;
  const writer = createBatchWriter<number>({
    intervalMs: 60_000,
    maxBatch: 10,
    closeTimeoutMs: 50,
    async write() {
      throw new Error('database away');
    },
    onDrop: (count) => (dropped += count),
  });
  writer.add(1);
  writer.add(2);
  await writer.close();
  assert.equal(dropped, 2);
});

test('rows added or dropped for overflow while a batch is being written stay in order', async () => {
  const written: number[] = [];
  let release!: () => void;
  let first = true;
  const writer = createBatchWriter<number>({
    intervalMs: 60_000,
    maxBatch: 2,
    maxQueued: 3,
    async write(items) {
      if (first) {
        first = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      written.push(...items);
    },
  });
  writer.add(1);
  writer.add(2); // starts writing [1, 2]
  for (let item = 3; item <= 7; item++) writer.add(item); // queue holds at most 3: [5, 6, 7]
  release();
  await writer.close();
  assert.deepEqual(written, [1, 2, 5, 6, 7]);
});

/** A writer whose first write waits for `release()`; `writes` lists every batch it was given. */
function writerWithHeldFirstWrite(maxBatch: number) {
  const writes: number[][] = [];
  let release!: () => void;
  const writer = createBatchWriter<number>({
    intervalMs: 60_000,
    maxBatch,
    async write(items) {
      writes.push(items);
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    },
  });
  return { writer, writes, release: () => release() };
}

test('items added while a batch is written wait for the next tick instead of a write of their own; flush() writes them', async () => {
  const { writer, writes, release } = writerWithHeldFirstWrite(3);
  for (let item = 1; item <= 3; item++) writer.add(item); // a full batch: written at once
  writer.add(4); // arrives during the write
  release();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(writes, [[1, 2, 3]]);
  assert.equal(writer.pending, 1);
  await writer.flush();
  assert.deepEqual(writes, [[1, 2, 3], [4]]);
  await writer.close();
});

test('a full batch that builds up during a write is written straight after it; flush() during a write also covers later items', async () => {
  const { writer, writes, release } = writerWithHeldFirstWrite(2);
  writer.add(1);
  writer.add(2); // starts writing [1, 2]
  const flushed = writer.flush(); // asked for during the write
  for (let item = 3; item <= 7; item++) writer.add(item);
  release();
  await flushed;
  assert.deepEqual(writes, [[1, 2], [3, 4], [5, 6], [7]]);
  assert.equal(writer.pending, 0);
  await writer.close();
});
