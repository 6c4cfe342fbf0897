// The roster's view of a session (D26): ended or live, its last activity, and the instructions
// accepted but not yet settled, from the events alone; a relay restarted on its store agrees.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionEmitter, command, type AepEvent } from '../../src/protocol/index.js';
import { SessionSummaries } from '../../src/relay/session-summary.js';

const S = 'sess-1';
const adapter = () => new SessionEmitter({ agent: 'codex', session: S, host: 'h' });
const instructCmd = (id: string) =>
  command({ agent: 'op', host: 'h' }, S, {
    type: 'x.codex.control.instruct',
    id,
    data: { text: 't' },
    capture: 'redacted',
  });

function lifecycle(): AepEvent[] {
  const a = adapter();
  return [
    a.emit({ type: 'session.started' }),
    instructCmd('c1'),
    a.emit({ type: 'control.accepted', cause: 'c1' }),
    instructCmd('c2'),
    a.emit({ type: 'control.accepted', cause: 'c2' }),
    instructCmd('c3'),
    a.emit({ type: 'control.rejected', cause: 'c3', data: { reason: 'invalid' } }),
    a.emit({ type: 'x.codex.instruction.delivered', cause: 'c1', data: { queued_ms: 5 } }),
    a.emit({ type: 'session.ended', data: { reason: 'normal' } }),
  ];
}

test('queued counts accepted instructs until delivered or dropped; the end moment marks the session ended', () => {
  const s = new SessionSummaries(() => []);
  const events = lifecycle();
  for (const e of events.slice(0, 5)) s.observe(e);
  // D37: only the agent's own events are activity; the adapter's acks to commands are not.
  assert.equal(s.get(S), { state: 'live', queued: 2, lastEventAt: events[0]!.time });
  for (const e of events.slice(5)) s.observe(e);
  assert.equal(s.get(S), { state: 'ended', queued: 1, lastEventAt: events.at(-1)!.time });
  // Redelivered events (an adapter re-claiming after a reconnect) change nothing.
  for (const e of events) s.observe(e);
  assert.equal(s.get(S).queued, 1);
});

test('a reopened session is live again; a closed one is ended again; a drop settles its instruction', () => {
  const s = new SessionSummaries(() => []);
  const a = adapter();
  for (const e of lifecycle()) s.observe(e);
  s.observe(a.emit({ type: 'x.codex.session.reopened' }));
  assert.is(s.get(S).state, 'live');
  s.observe(a.emit({ type: 'x.codex.instruction.dropped', cause: 'c2', data: { reason: 'session-ended' } }));
  s.observe(a.emit({ type: 'x.codex.session.closed', data: { reason: 'normal' } }));
  assert.equal([s.get(S).state, s.get(S).queued], ['ended', 0]);
});

test('a withdrawal settles the instruction it names as subject, though the withdraw caused the drop', () => {
  const s = new SessionSummaries(() => []);
  const a = adapter();
  for (const e of lifecycle().slice(0, 5)) s.observe(e);
  assert.is(s.get(S).queued, 2);
  // D32: the drop is caused by the withdraw command (w1) and names the instruction (c2) as subject.
  s.observe(a.emit({ type: 'x.codex.instruction.dropped', cause: 'w1', subject: 'c2', data: { reason: 'withdrawn' } }));
  assert.is(s.get(S).queued, 1);
  const rebuilt = new SessionSummaries(() =>
    [
      ...lifecycle().slice(0, 5),
      a.emit({ type: 'x.codex.instruction.dropped', cause: 'w1', subject: 'c1', data: { reason: 'withdrawn' } }),
    ].map((e) => JSON.stringify(e)),
  );
  assert.is(rebuilt.get(S).queued, 1, 'a relay restarted on its store agrees');
});

test('running: from a run start to its end, and never past the session end (D43: idle is between turns)', () => {
  const s = new SessionSummaries(() => []);
  const a = adapter();
  s.observe(a.emit({ type: 'session.started' }));
  assert.is(s.get(S).running, undefined);
  s.observe(a.emit({ type: 'run.started', data: { trigger: 'user' } }));
  assert.is(s.get(S).running, true);
  assert.is(s.about(S).agent, 'codex');
  assert.not.ok('running' in s.about(S), 'running is the summary, not what the adapter described');
  s.observe(a.emit({ type: 'run.finished' }));
  assert.is(s.get(S).running, undefined);
  s.observe(a.emit({ type: 'run.started', data: { trigger: 'control' } }));
  s.observe(a.emit({ type: 'run.failed', data: { reason: 'model-error' } }));
  assert.is(s.get(S).running, undefined, 'a failed run ends the turn too');
  s.observe(a.emit({ type: 'run.started', data: { trigger: 'user' } }));
  s.observe(a.emit({ type: 'session.ended', data: { reason: 'normal' } }));
  assert.equal(s.get(S), { state: 'ended', queued: 0, lastEventAt: s.get(S).lastEventAt });
});

test('after a restart the summary is rebuilt from what the store holds', () => {
  const raws = lifecycle().map((e) => JSON.stringify(e));
  const s = new SessionSummaries((session) => (session === S ? [...raws, 'not json'] : []));
  assert.equal([s.get(S).state, s.get(S).queued], ['ended', 1]);
  assert.equal(s.get('other'), { state: 'live', queued: 0 });
});

test('the cap forgets the least recently updated session', () => {
  let rebuilt = 0;
  const s = new SessionSummaries(() => {
    rebuilt += 1;
    return [];
  }, 2);
  s.get('a');
  s.get('b');
  s.get('a');
  s.get('c');
  assert.is(rebuilt, 3);
  s.get('a');
  assert.is(rebuilt, 3, 'a was used recently and kept');
  s.get('b');
  assert.is(rebuilt, 4, 'b was forgotten and rebuilt');
});

test.run();
