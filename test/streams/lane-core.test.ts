// D30, D31: a refused delivery names the way to a native lane only where a lane would honour it
// (pure, through the session machine); a lane that keeps unread steers leaves them to their receipt at
// a turn's end; a lane that said its own loss is not said again by the core.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject, firstValueFrom, map, type Observable } from 'rxjs';
import { command, type SteeringError } from '../../src/protocol/index.js';
import { fromLaneFacts, throughLanes } from '../../src/streams/lanes.js';
import { laneApproval, type LaneEffect } from '../../src/streams/lane-host.js';
import type { SessionItem } from '../../src/streams/step-types.js';
import { until } from '../support/until.js';
import type { Lane, LaneFact } from '../../src/streams/lane.js';
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
  const lane = { name: 'serve', facts$: facts } as unknown as Lane;
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

/** A lane that records its calls; `throws` makes every call throw. */
function recording(name: string, extra: Partial<Lane> = {}, throws = false) {
  const calls: unknown[][] = [];
  const answer = async (...a: unknown[]) => {
    calls.push(a);
    if (throws) throw new Error('socket closed');
    return { ok: true as const };
  };
  const lane: Lane = {
    name,
    deliveries: [],
    how: `reach ${name}`,
    reaches: () => true,
    facts$: new Subject<LaneFact>(),
    close: async () => undefined,
    answer,
    interrupt: answer,
    ...extra,
  };
  return { lane, calls };
}

const answerOf = (o: Observable<SessionItem>): Promise<SessionInput | undefined> =>
  firstValueFrom(o.pipe(map((i) => (i.kind === 'input' ? i.input : undefined))), { defaultValue: undefined });

test('one effect vocabulary: a call names its lane; one without a name goes to the vendor channel', async () => {
  const steering = recording('serve', { steer: async () => ({ ok: true }) });
  const channel = recording('hub', { send: async () => ({ ok: true }) });
  const lanes = [steering.lane, channel.lane];
  const now = () => 42;
  const interrupt = { verb: 'interrupt' as const, commandId: 'k1' };
  assert.equal(
    await answerOf(throughLanes(lanes, { kind: 'lane', session: 's', lane: 'serve', call: interrupt }, true, now)),
    {
      type: 'cancel.answered',
      at: 42,
      commandId: 'k1',
      ok: true,
    },
  );
  assert.equal(steering.calls, [['s', {}]]);
  await answerOf(throughLanes(lanes, { kind: 'lane', session: 's', call: interrupt }, true, now));
  assert.equal(channel.calls, [['s', {}]], 'the unnamed call went to the channel');
  // An answer names the lane it was raised on; one restored from an older log (no lane in its id) goes to the channel.
  const answer = (approvalId: string, lane?: string): LaneEffect => ({
    kind: 'lane',
    session: 's',
    ...(lane === undefined ? {} : { lane }),
    call: { verb: 'answer', approvalId, approved: false, reason: 'not now' },
  });
  await answerOf(throughLanes(lanes, answer('ap1', 'serve'), true, now));
  await answerOf(throughLanes(lanes, answer('ap2'), true, now));
  await until(() => steering.calls.length === 2 && channel.calls.length === 2, 'both answers made');
  assert.equal(steering.calls[1], ['s', 'ap1', false, 'not now']);
  assert.equal(channel.calls[1], ['s', 'ap2', false, 'not now']);
});

test('a call that cannot go out answers as its verb is answered: not durable, no such lane, a lane that throws', async () => {
  const broken = recording('hub', { send: async () => Promise.reject(new Error('socket closed')) }, true);
  const now = () => 7;
  const send: LaneEffect = { kind: 'lane', session: 's', call: { verb: 'send', commandId: 'c1', text: 'x' } };
  assert.equal(await answerOf(throughLanes([broken.lane], send, false, now)), {
    type: 'input.failed',
    at: 7,
    commandId: 'c1',
  });
  assert.equal(broken.calls, [], 'nothing goes out for a step that is not durable (D22)');
  assert.equal(await answerOf(throughLanes([broken.lane], send, true, now)), {
    type: 'input.failed',
    at: 7,
    commandId: 'c1',
  });
  const perform: LaneEffect = {
    kind: 'lane',
    session: 's',
    call: { verb: 'perform', command: command({ agent: 't' }, 's', { type: 'control.pause', id: 'p1' }) },
  };
  const none = await answerOf(throughLanes([], perform, true, now));
  assert.equal(none, {
    type: 'forward.settled',
    at: 7,
    commandId: 'p1',
    rejection: { reason: 'busy', rule: 'transport-down', detail: 'no lane for this (the vendor channel)' },
  });
  const threw = recording('agent-server', { perform: () => Promise.reject(new Error('ECONNRESET')) });
  const r = (await answerOf(throughLanes([threw.lane], perform, true, now))) as { rejection?: { detail: string } };
  assert.is(r.rejection?.detail, 'the vendor API failed: Error: ECONNRESET');
  const withdraw: LaneEffect = {
    kind: 'lane',
    session: 's',
    lane: 'hub',
    call: { verb: 'withdraw', commandId: 'w1', target: 'c1', of: 'input', text: 'x' },
  };
  assert.equal(await answerOf(throughLanes([broken.lane], withdraw, true, now)), {
    type: 'withdraw.answered',
    at: 7,
    commandId: 'w1',
    detail: 'no lane for this (hub)',
  });
});

test("a channel's approvals name it, are observed only without its gate, and its loss voids them", async () => {
  const facts = new Subject<LaneFact>();
  const lane = { ...recording('hub').lane, facts$: facts };
  const holds = [
    { external: laneApproval('hub', 'ap1') },
    { external: 'ap-old' },
    { external: laneApproval('serve', 'x') },
  ];
  const host = { context: () => ({ holds }), sessionKeys: () => ['s'] } as unknown as ActorHost;
  const got: SessionItem[] = [];
  const sub = fromLaneFacts([lane], host, new Subject(), () => undefined, { observedOnly: ['hub'] }).subscribe((i) =>
    got.push(i),
  );
  const request = { kind: 'permission' as const, prompt: 'may I', respondVia: ['control', 'oob'] };
  facts.next({ kind: 'approval', session: 's', at: 1, approvalId: 'ap1', request });
  facts.next({ kind: 'lost', at: 2, detail: 'dropped', said: true });
  sub.unsubscribe();
  const [asked, lost] = got.map((i) => (i.kind === 'input' ? i.input : undefined));
  assert.ok(asked?.type === 'approval.requested');
  assert.is(asked.approvalId, 'lane:hub:ap1');
  assert.equal(asked.request.respondVia, ['oob'], 'answered in the vendor UI alone');
  assert.equal(lost, { type: 'transport.lost', at: 2 });
});

test.run();
