import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallAbort, type CallSignal } from './call-signal.js';
import { undiciCore } from './undici-core.js';

test('CallAbort: aborts once with the first reason; listeners run in order, once each; a removed one does not run', () => {
  const abort = new CallAbort();
  const order: string[] = [];
  const first = () => order.push('first');
  const removed = () => order.push('removed');
  const last = () => order.push(`last saw ${String((abort.signal.reason as Error).message)}`);
  abort.signal.addEventListener('abort', first, { once: true });
  abort.signal.addEventListener('abort', removed);
  abort.signal.addEventListener('abort', last);
  abort.signal.removeEventListener('abort', removed);
  abort.signal.removeEventListener('abort', () => order.push('never added'));
  assert.equal(abort.signal.aborted, false);
  assert.equal(abort.signal.reason, undefined);

  const reason = new Error('client left');
  abort.abort(reason);
  abort.abort(new Error('second reason'));
  assert.equal(abort.signal.aborted, true);
  assert.equal(abort.signal.reason, reason);
  assert.deepEqual(order, ['first', 'last saw client left']);

  abort.signal.addEventListener('abort', () => order.push('added after the abort'));
  abort.abort(reason);
  assert.deepEqual(order, ['first', 'last saw client left']);
});

test('CallAbort: without a reason the reason is an AbortError, like AbortController', () => {
  const ours = new CallAbort();
  const node = new AbortController();
  ours.abort(undefined);
  node.abort();
  assert.equal((ours.signal.reason as DOMException).name, 'AbortError');
  assert.equal((ours.signal.reason as DOMException).name, (node.signal.reason as DOMException).name);
});

test('CallAbort: a listener that throws does not stop the others; its error is rethrown after all ran', () => {
  const abort = new CallAbort();
  const ran: number[] = [];
  abort.signal.addEventListener('abort', () => {
    ran.push(1);
    throw new Error('listener bug');
  });
  abort.signal.addEventListener('abort', () => ran.push(2));
  assert.throws(() => abort.abort(new Error('stop')), /listener bug/);
  assert.deepEqual(ran, [1, 2]);
  assert.equal(abort.signal.aborted, true);
});

test('CallAbort: a Node AbortSignal is a CallSignal too (tests and callers may pass either)', () => {
  const node: CallSignal = new AbortController().signal;
  assert.equal(node.aborted, false);
});

test('CallAbort: undici takes it as a request signal; aborting cuts a request the upstream has not answered', async () => {
  let received!: () => void;
  const requestArrived = new Promise<void>((resolve) => (received = resolve));
  const server = createServer(() => received()); // never answers
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new undiciCore.Agent();
  try {
    const abort = new CallAbort();
    const { port } = server.address() as AddressInfo;
    const pending = undiciCore.request(agent, { origin: `http://127.0.0.1:${port}`, path: '/', method: 'GET', signal: abort.signal as never });
    await requestArrived;
    const reason = new Error('attempt total timeout');
    abort.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
  } finally {
    await agent.close().catch(() => {});
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
