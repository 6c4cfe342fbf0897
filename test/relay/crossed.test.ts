// What a fabric node fans out of other nodes' sessions (src/relay/crossed.ts): an answer's early
// copy only as its session's next position, its stored copy then dropped; otherwise the stored
// copy in its turn.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { CrossedAnswers } from '../../src/relay/crossed.js';

let n = 0;
const ev = (session: string, seq: number | undefined, type = 'progress.status', epoch?: number): AepEvent =>
  ({
    aep: '0.1',
    id: `e${++n}`,
    source: 'aep://h/agent',
    type,
    time: '2026-12-04T00:00:00Z',
    session,
    ...(seq === undefined ? {} : { seq }),
    ...(epoch === undefined ? {} : { epoch }),
  }) as AepEvent;
const ack = (session: string, seq: number, epoch?: number) => ev(session, seq, 'control.accepted', epoch);

test("an answer next in its session's order goes out early, and its stored copy does not", () => {
  const c = new CrossedAnswers();
  assert.ok(c.stored(ev('s', 1)));
  const a = ack('s', 2);
  assert.ok(c.answer(a));
  assert.not.ok(c.stored(a));
  // What the session stores next goes out as before.
  assert.ok(c.stored(ev('s', 3)));
  assert.equal(c.held, { sessions: 1, early: 0 });
});

test('an answer that would overtake an event still on its way waits for its stored copy', () => {
  const c = new CrossedAnswers();
  assert.ok(c.stored(ev('s', 1)));
  // seq 2 is still in the feed: the answer at 3 is not next, so only its stored copy goes out.
  const a = ack('s', 3);
  assert.not.ok(c.answer(a));
  assert.ok(c.stored(ev('s', 2)));
  assert.ok(c.stored(a));
});

test('a session not seen here yet, another epoch, or an answer without a position takes the stored path', () => {
  const c = new CrossedAnswers();
  assert.not.ok(c.answer(ack('new', 1)));
  assert.ok(c.stored(ev('s', 7, 'progress.status', 1)));
  assert.not.ok(c.answer(ack('s', 1, 2)));
  assert.not.ok(c.answer(ev('s', undefined, 'control.accepted')));
  // The epoch's own next seq is next.
  assert.ok(c.answer(ack('s', 8, 1)));
});

test('an answer whose stored copy came first is not sent again by its early copy', () => {
  const c = new CrossedAnswers();
  assert.ok(c.stored(ev('s', 1)));
  const a = ack('s', 2);
  assert.ok(c.stored(a));
  assert.not.ok(c.answer(a));
});

test('sessions and early answers are held up to the cap, the idlest session forgotten first', () => {
  const c = new CrossedAnswers(2);
  assert.ok(c.stored(ev('a', 1)));
  assert.ok(c.stored(ev('b', 1)));
  assert.ok(c.stored(ev('a', 2)));
  assert.ok(c.stored(ev('c', 1)));
  assert.equal(c.held.sessions, 2);
  // b was the idlest: forgotten, its answer takes the stored path; a is still known.
  assert.not.ok(c.answer(ack('b', 2)));
  assert.ok(c.answer(ack('a', 3)));
});

test('a read waits for the stored copies of the answers sent early before it, and no longer', async () => {
  const c = new CrossedAnswers();
  assert.is(c.settled(1000), undefined);
  assert.ok(c.stored(ev('s', 1)));
  assert.ok(c.stored(ev('t', 1)));
  const a = ack('s', 2);
  const b = ack('t', 2);
  assert.ok(c.answer(a));
  assert.ok(c.answer(b));
  let read = false;
  const waited = c.settled(5000)!.then(() => (read = true));
  // An answer sent after the read began is not waited for.
  assert.ok(c.stored(ev('s', 3)));
  assert.ok(c.answer(ack('s', 4)));
  assert.not.ok(c.stored(a));
  await new Promise((r) => setImmediate(r));
  assert.not.ok(read);
  assert.not.ok(c.stored(b));
  await waited;
  assert.ok(read);
});

test('a read does not wait past its bound for an answer that is never stored', async () => {
  const c = new CrossedAnswers();
  assert.ok(c.stored(ev('s', 1)));
  assert.ok(c.answer(ack('s', 2)));
  const t0 = Date.now();
  await c.settled(50);
  assert.ok(Date.now() - t0 < 1000);
});

test.run();
