// D30, D31: a refused delivery names the way to a native lane only where a lane would honour it
// (pure, through the session machine); a lane that keeps unread steers leaves them to their receipt at
// a turn's end; a lane that said its own loss is not said again by the core.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { command, type SteeringError } from '../../src/protocol/index.js';
import { fromLaneFacts } from '../../src/streams/native-lanes.js';
import type { LaneFact, NativeLane } from '../../src/streams/lane.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { ActorHost } from '../../src/streams/actor-host.js';
import { run, SESSION, VENDOR } from '../support/session-steps.js';

const NATIVE = { deliveries: ['steer'], hint: 'host the session on a daemon' };
const send = (id: string, delivery: string): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment'],
  native: NATIVE,
  command: command({ agent: 'tester' }, SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: { text: `text of ${id}`, delivery },
    capture: 'redacted',
  }),
});
const detailOf = (outputs: readonly unknown[]): string | undefined =>
  (outputs.at(-1) as { rejection?: { rule: string; detail: string } }).rejection?.detail;

test('no lane reaches the session: a steer refused names the way to a lane, a queue refused does not', () => {
  const steer = run([send('c1', 'steer')]);
  assert.is(
    detailOf(steer.outputs),
    'this session cannot take delivery "steer": it accepts moment; host the session on a daemon',
  );
  const queue = run([send('c2', 'queue')]);
  assert.is(detailOf(queue.outputs), 'this session cannot take delivery "queue": it accepts moment');
});

test('a lane reaching the session: a queue neither lane has is refused naming what it takes, without the hint', () => {
  const r = run([{ type: 'lane.reach', at: 500, lane: 'serve', reaches: true }, send('c3', 'queue')]);
  assert.is(detailOf(r.outputs), 'this session cannot take delivery "queue": it accepts moment, steer');
});

test('a lane that keeps unread steers: a turn end leaves the steer awaiting its receipt, which delivers it', () => {
  const steer = send('c4', 'steer');
  const inputs: SessionInput[] = [
    { type: 'lane.reach', at: 500, lane: 'serve', reaches: true },
    { type: 'lane.turn', at: 600, open: true },
    steer,
    { type: 'lane.answered', at: 1100, commandId: 'c4', ok: true },
  ];
  const end: SessionInput = { type: 'lane.turn', at: 2000, open: false, interrupted: false, keepsUnread: true };
  const kept = run([...inputs, end]);
  assert.not.ok(
    kept.outputs.some((o) => o.type === 'instruction.dropped'),
    'not dropped at the turn end',
  );
  const later = run([{ type: 'lane.delivered', at: 2500, commandId: 'c4', ref: 'c4' }], kept.snap);
  assert.equal(
    later.outputs.map((o) => o.type),
    ['instruction.delivered'],
  );
  // Without the flag (a lane whose turn end means unread) it is dropped turn-ended, as before.
  const plain = run([...inputs, { ...end, keepsUnread: undefined }]);
  assert.ok(plain.outputs.some((o) => o.type === 'instruction.dropped'));
});

function lost(fact: LaneFact): SteeringError[] {
  const facts = new Subject<LaneFact>();
  const lane = { name: 'serve', facts$: facts } as unknown as NativeLane;
  const host = { context: () => undefined, sessionKeys: () => [] } as unknown as ActorHost;
  const said: SteeringError[] = [];
  const sub = fromLaneFacts([lane], host, new Subject(), (e) => said.push(e)).subscribe();
  facts.next(fact);
  sub.unsubscribe();
  return said;
}

test('a lost lane is said once by the core, unless the lane said it already (`said`)', () => {
  const core = lost({ kind: 'lost', at: 1, detail: 'the daemon does not answer' });
  assert.is(core.length, 1);
  assert.match(core[0]!.message, 'the serve lane is gone (the daemon does not answer)');
  assert.equal(lost({ kind: 'lost', at: 1, detail: 'the daemon does not answer', said: true }), []);
});

test.run();
