import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AnswerTimes, createAnswerWaitPoller } from './answer-wait-poller.js';

/** A poller on a hand-driven clock and loop: `turns` holds what would run on the next check phase. */
function manualPoller(windowMs: number) {
  let clock = 0;
  const turns: Array<() => void> = [];
  const poller = createAnswerWaitPoller({ windowMs, now: () => clock, schedule: (turn) => turns.push(turn) });
  /** Runs the loop's next turn (what was scheduled for it); returns how many turns it ran. */
  const runTurn = () => {
    const due = turns.splice(0);
    for (const turn of due) turn();
    return due.length;
  };
  return { poller, turns, runTurn, advance: (ms: number) => (clock += ms), now: () => clock };
}

describe('answer wait poller', () => {
  test('polls for an answer due soon until it arrives, then lets the loop sleep', () => {
    const { poller, turns, runTurn, advance, now } = manualPoller(0.5);
    const times = new AnswerTimes();
    times.record(0.2);
    assert.equal(poller.sent(times, now()), true);
    assert.equal(poller.polling, true);
    for (let index = 0; index < 3; index++) {
      advance(0.05);
      assert.equal(runTurn(), 1, 'the loop keeps turning while the answer is due');
    }
    poller.settled();
    assert.equal(runTurn(), 1);
    assert.equal(turns.length, 0, 'nothing is scheduled once the answer arrived');
    assert.equal(poller.polling, false);
  });

  test('stops at the end of the window even when the answer never comes', () => {
    const { poller, turns, runTurn, advance, now } = manualPoller(0.5);
    assert.equal(poller.sent(new AnswerTimes(), now()), true, 'an origin with no answers yet is polled for once');
    advance(0.3);
    runTurn();
    assert.equal(turns.length, 1);
    advance(0.3);
    runTurn();
    assert.equal(turns.length, 0, 'past the window the loop sleeps again');
    assert.equal(poller.polling, false);
    // Its exchange ends at last (a timeout); a later request starts a new window.
    poller.settled();
    assert.equal(turns.length, 0, 'a settle past the window starts nothing');
    assert.equal(poller.sent(new AnswerTimes(), now()), true);
    assert.equal(turns.length, 1);
  });

  test('an origin whose answers take longer than the window is never polled for', () => {
    const { poller, turns, now } = manualPoller(0.5);
    const slow = new AnswerTimes();
    slow.record(120);
    assert.equal(poller.sent(slow, now()), false);
    assert.equal(turns.length, 0);
    assert.equal(poller.polling, false);
  });

  test('a window of 0 never polls', () => {
    const { poller, turns, now } = manualPoller(0);
    assert.equal(poller.sent(new AnswerTimes(), now()), false);
    assert.equal(turns.length, 0);
  });

  test('polls only while a single request awaits its answer: with two in flight the loop is busy anyway', () => {
    const { poller, turns, runTurn, advance, now } = manualPoller(1);
    poller.sent(new AnswerTimes(), now());
    assert.equal(turns.length, 1);
    advance(0.2);
    poller.sent(new AnswerTimes(), now());
    assert.equal(turns.length, 1, 'one chain, not one per request');
    runTurn();
    assert.equal(turns.length, 0, 'with two awaiting their answers the chain stops');
    assert.equal(poller.polling, false);
    advance(0.3);
    poller.settled();
    assert.equal(turns.length, 1, 'one left: polled for again, within the latest window');
    advance(0.3);
    runTurn();
    assert.equal(turns.length, 1);
    advance(0.5);
    runTurn();
    assert.equal(turns.length, 0, 'past the latest window the loop sleeps');
    poller.settled();
    poller.settled();
    assert.equal(turns.length, 0);
    assert.equal(poller.sent(new AnswerTimes(), now()), true, 'an extra settle leaves the count at zero');
    assert.equal(turns.length, 1);
  });

  test('answer times follow the recent answers', () => {
    const times = new AnswerTimes();
    assert.equal(times.typicalMs, undefined);
    times.record(8);
    assert.equal(times.typicalMs, 8);
    for (let index = 0; index < 40; index++) times.record(0.2);
    assert.ok(times.typicalMs! < 0.25, `typical ${times.typicalMs} after a run of fast answers`);
    for (let index = 0; index < 40; index++) times.record(300);
    assert.ok(times.typicalMs! > 250, `typical ${times.typicalMs} after a run of slow answers`);
  });

  test('with the real loop, a chain ends by itself once its window passes', async () => {
    const poller = createAnswerWaitPoller({ windowMs: 2 });
    poller.sent(new AnswerTimes(), performance.now());
    assert.equal(poller.polling, true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(poller.polling, false);
  });
});
