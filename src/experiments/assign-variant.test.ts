import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignVariant, stickyFraction } from './assign-variant.js';

const experiment = { id: 'exp-1', variants: [{ name: 'a', weight: 1 }, { name: 'b', weight: 3 }, { name: 'c', weight: 6 }] };

test('random assignment follows the weights within tolerance', () => {
  let seed = 42;
  // A fixed linear congruential generator keeps the test deterministic.
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  const total = 20_000;
  for (let index = 0; index < total; index++) counts[assignVariant(experiment, undefined, random).name]++;
  assert.ok(Math.abs(counts.a / total - 0.1) < 0.02, JSON.stringify(counts));
  assert.ok(Math.abs(counts.b / total - 0.3) < 0.02, JSON.stringify(counts));
  assert.ok(Math.abs(counts.c / total - 0.6) < 0.02, JSON.stringify(counts));
});

test('per-user assignment is sticky and follows the weights across users', () => {
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  const total = 20_000;
  for (let index = 0; index < total; index++) {
    const first = assignVariant(experiment, `user-${index}`, () => 0).name;
    assert.equal(assignVariant(experiment, `user-${index}`, () => 0.99).name, first, 'random() is not consulted for a known user');
    counts[first]++;
  }
  assert.ok(Math.abs(counts.a / total - 0.1) < 0.02, JSON.stringify(counts));
  assert.ok(Math.abs(counts.c / total - 0.6) < 0.02, JSON.stringify(counts));
});

test('the sticky draw depends on the experiment as well as the user', () => {
  assert.notEqual(stickyFraction('exp-1', 'u'), stickyFraction('exp-2', 'u'));
  const fraction = stickyFraction('exp-1', 'u');
  assert.ok(fraction >= 0 && fraction < 1);
});
