// D30–D33 stepped through the session machine (pure): which lane an accepted instruction goes in
// by, what the lane's answer, receipt, turns and loss do, the vendor's echo of a steer, and the
// host's recognition of that echo. Nothing is run: the lane is only its inputs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import { asEcho } from '../../src/streams/lane-host.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import type { ClassifiedHook } from '../../src/streams/surface.js';
import { run, written, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const NATIVE = { deliveries: ['steer'], hint: 'start it with `aep-steer run codex`' };
const sender = { agent: 'tester', host: 'test-host' };

const send = (id: string, delivery?: string, opts: { honours?: string[]; at?: number } = {}): SessionInput => ({
  type: 'command.instruct',
  at: opts.at ?? 1000,
  gateOpen: true,
  deliveries: opts.honours ?? ['moment', 'steer', 'queue'],
  native: NATIVE,
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: delivery === undefined ? { text: `text of ${id}` } : { text: `text of ${id}`, delivery },
    capture: 'redacted',
  }),
});
const reach = (reaches = true, at = 500): SessionInput => ({ type: 'lane.reach', at, lane: 'app-server', reaches });
const opens = (hookId = 'h-open', at = 600): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible: true,
  turn: 'opens',
  moment: 'UserPromptSubmit',
});
const inside = (hookId: string, at = 2000): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible: true,
  moment: 'PostToolUse',
});
const answered = (commandId: string, ok = true, reason?: 'turn-ended' | 'idle' | 'unreachable'): SessionInput => ({
  type: 'lane.answered',
  at: 1100,
  commandId,
  ok,
  ...(reason === undefined ? {} : { reason }),
});
const receipt = (commandId: string, at = 1300): SessionInput => ({
  type: 'lane.delivered',
  at,
  commandId,
  ref: 'turn-1',
});
const turnEnd = (interrupted = false, at = 4000): SessionInput => ({ type: 'lane.turn', at, open: false, interrupted });
const withdraw = (id: string, instruction: string): SessionInput => ({
  type: 'command.withdraw',
  at: 1500,
  gateOpen: true,
  command: command(sender, SESSION, { type: `x.${VENDOR}.control.withdraw`, id, data: { instruction } }),
});

const types = (outputs: readonly SessionOutput[]) => outputs.map((o) => o.type);
const laneRunning = (): Snap => run([opens(), reach()]).snap;

test('a steer goes to the native lane that reaches the session, never also into the hook queue', () => {
  const { snap, outputs } = run([send('c1', 'steer')], laneRunning());
  assert.equal(types(outputs), ['control.accepted', 'lane.steer']);
  assert.equal(outputs[1], { type: 'lane.steer', cause: 'c1', text: 'text of c1', lane: 'app-server' });
  assert.equal(snap.context.queue, []);
  // A hook moment inside the turn does not carry it: one way in, one delivery.
  const moment = run([inside('h1')], snap);
  assert.equal(types(moment.outputs), ['reply.neutral']);
});

test("delivered on the vendor's receipt, with the lane and the accepting turn; the answer alone delivers nothing", () => {
  const taken = run([send('c1', 'steer'), answered('c1')], laneRunning());
  assert.equal(types(taken.outputs), ['control.accepted', 'lane.steer'], 'the answer {turnId} means queued, not read');
  const { snap, outputs } = run([receipt('c1')], taken.snap);
  assert.equal(outputs, [
    {
      type: 'instruction.delivered',
      eventType: `x.${VENDOR}.instruction.delivered`,
      cause: 'c1',
      queuedMs: 300,
      delivery: 'steer',
      lane: 'app-server',
      ref: 'turn-1',
    },
  ]);
  assert.equal(snap.context.laned, []);
  // A second receipt for the same command delivers nothing more.
  assert.equal(run([receipt('c1', 1400)], snap).outputs, []);
});

test('the receipt may come before the answer; a resend of the same command is one delivery', () => {
  const { outputs } = run(
    [send('c1', 'steer'), receipt('c1'), answered('c1'), send('c1', 'steer', { at: 1200 })],
    laneRunning(),
  );
  assert.equal(types(outputs), ['control.accepted', 'lane.steer', 'instruction.delivered', 'control.reack']);
});

test('the turn ended before the lane took it: dropped turn-ended, never turned into a turn start or a queue', () => {
  for (const reason of ['turn-ended', 'idle'] as const) {
    const { snap, outputs } = run([send('c1', 'steer'), answered('c1', false, reason)], laneRunning());
    assert.equal(outputs.at(-1), {
      type: 'instruction.dropped',
      eventType: `x.${VENDOR}.instruction.dropped`,
      cause: 'c1',
      reason: 'turn-ended',
    });
    assert.equal([snap.context.queue, snap.context.laned], [[], []]);
  }
  const down = run([send('c1', 'steer'), answered('c1', false, 'unreachable')], laneRunning());
  assert.is((down.outputs.at(-1) as { reason?: string }).reason, 'send-failed');
});

test('a taken steer still unread when the lane sees its turn end is dropped turn-ended', () => {
  const { outputs } = run([send('c1', 'steer'), answered('c1'), turnEnd()], laneRunning());
  assert.equal((outputs.at(-1) as { reason?: string }).reason, 'turn-ended');
});

test('steer with no turn running is refused session-idle, lane or not', () => {
  const { outputs } = run([reach(), send('c1', 'steer')]);
  const r = outputs.at(-1) as { type: string; rejection?: unknown };
  assert.equal(
    [r.type, r.rejection],
    [
      'control.rejected',
      {
        reason: 'refused',
        rule: 'session-idle',
        detail: 'no turn is running, and a steer never starts one: send it with delivery queue, or as a moment',
      },
    ],
  );
});

test('no native lane: the hook lane honours what its table says; what neither honours is refused with the way to a lane', () => {
  const hookSteer = run([opens(), send('c1', 'steer')]);
  assert.equal(types(hookSteer.outputs).slice(-1), ['control.accepted']);
  assert.is(hookSteer.snap.context.queue[0]?.id, 'c1', 'the hook lane queues it for a moment inside the turn');
  const refused = run([opens(), send('c2', 'steer', { honours: ['moment', 'queue'] })]);
  const r = refused.outputs.at(-1) as { rejection?: { rule: string; detail: string } };
  assert.is(r.rejection?.rule, 'delivery-unsupported');
  assert.match(r.rejection!.detail, 'it accepts moment, queue; start it with `aep-steer run codex`');
  // With the lane reaching it, the same session takes the steer through the lane.
  const laned = run([reach(), send('c3', 'steer', { honours: ['moment', 'queue'] })], refused.snap);
  assert.equal(types(laned.outputs).slice(-2), ['control.accepted', 'lane.steer']);
});

test('queue and moment stay with the hook lane while a native lane reaches the session; withdraw works there', () => {
  const { snap, outputs } = run([send('q1', 'queue'), send('m1')], laneRunning());
  assert.equal(types(outputs), ['control.accepted', 'control.accepted']);
  assert.equal(
    snap.context.queue.map((i) => i.id),
    ['q1', 'm1'],
  );
  const w = run([withdraw('w1', 'q1')], snap);
  assert.equal(types(w.outputs), ['control.accepted', 'instruction.dropped']);
  // A steer handed to the lane cannot be taken back (Codex has no withdraw for it).
  const s = run([send('s1', 'steer'), withdraw('w2', 's1')], w.snap);
  const r = s.outputs.at(-1) as { rejection?: { rule: string } };
  assert.is(r.rejection?.rule, 'already-delivered');
});

test("the vendor's echo of a steer is no turn of its own: nothing rides it, the queue waits for the next turn", () => {
  const taken = run([send('q1', 'queue'), send('c1', 'steer'), answered('c1')], laneRunning());
  assert.equal(taken.snap.context.echoes, [{ id: 'c1', text: 'text of c1' }]);
  const echo: SessionInput = { ...(opens('h-echo', 1200) as object), echo: 'c1' } as SessionInput;
  const { snap, outputs } = run([echo], taken.snap);
  assert.equal(outputs, [{ type: 'reply.neutral', hookId: 'h-echo' }]);
  assert.equal(
    snap.context.queue.map((i) => i.id),
    ['q1'],
    'the queued instruction is not delivered into the steer',
  );
  assert.equal(snap.context.echoes, []);
  const next = run([opens('h-next', 5000), written('h-next', 5001)], snap);
  assert.ok(types(next.outputs).includes('instruction.delivered'), "the next turn's first moment delivers it");
});

test("the host recognises the echo by its prompt: observations, title and the turn's opening are left out", () => {
  const taken = run([send('c1', 'steer'), answered('c1')], laneRunning()).snap.context;
  const hook: ClassifiedHook = {
    session: SESSION,
    event: 'UserPromptSubmit',
    class: { kind: 'moment', eligible: true },
    bounds: 'opens',
    observations: [{ type: 'run.started', data: { trigger: 'user' } }],
    about: { cwd: '/w', prompt: 'text of c1' },
  };
  assert.equal(asEcho(hook, taken), {
    session: SESSION,
    event: 'UserPromptSubmit',
    class: { kind: 'moment', eligible: false },
    observations: [],
    about: { cwd: '/w' },
    echo: 'c1',
  });
  const person = { ...hook, about: { cwd: '/w', prompt: 'a prompt of my own' } };
  assert.is(asEcho(person, taken), person, "a person's prompt stays what it is");
});

test('cancel through the lane settles on its interrupted end, whichever of answer and end comes first', () => {
  const cancel = (id: string): SessionInput => ({
    type: 'command.cancel',
    at: 1000,
    gateOpen: true,
    ready: true,
    lane: 'app-server',
    command: command(sender, SESSION, { type: 'control.cancel', id, data: { scope: 'run' } }),
  });
  const ok = (commandId: string): SessionInput => ({ type: 'cancel.answered', at: 1100, commandId, ok: true });
  const answerFirst = run([cancel('k1'), ok('k1'), turnEnd(true)], laneRunning());
  assert.equal(types(answerFirst.outputs), ['run.cancel', 'control.accepted', 'run.cancelled']);
  assert.equal(answerFirst.outputs[0], { type: 'run.cancel', cause: 'k1', lane: 'app-server' });
  const endFirst = run([cancel('k2'), turnEnd(true), ok('k2')], laneRunning());
  assert.equal(types(endFirst.outputs), ['run.cancel', 'control.accepted', 'run.cancelled']);
  assert.is((endFirst.outputs[2] as { cause: string }).cause, 'k2');
  // A turn that finished on its own before the interrupt took effect is not reported cancelled.
  const finished = run([cancel('k3'), ok('k3'), turnEnd(false)], laneRunning());
  assert.not.ok(types(finished.outputs).includes('run.cancelled'));
});

test('run.cancelled names the run the opening moment named, and the tool processes the lane saw, in either order', () => {
  const named = run([{ ...opens(), runId: 'turn-7' } as SessionInput, reach()]).snap;
  const cancel = (id: string, data: Record<string, unknown> = { scope: 'run' }): SessionInput => ({
    type: 'command.cancel',
    at: 1000,
    gateOpen: true,
    ready: true,
    lane: 'app-server',
    command: command(sender, SESSION, { type: 'control.cancel', id, data }),
  });
  const ok = (commandId: string): SessionInput => ({ type: 'cancel.answered', at: 1100, commandId, ok: true });
  const left = [{ pid: 4242, command: "/bin/bash -lc 'sleep 600'" }];
  const end: SessionInput = { type: 'lane.turn', at: 4000, open: false, interrupted: true, leftRunning: left };
  const cancelled = (cause: string) => ({
    type: 'run.cancelled',
    cause,
    run: 'turn-7',
    leftRunning: left,
    decidedBy: { identity: 'tester', surface: 'cli' },
  });
  const answerFirst = run([cancel('k1'), ok('k1'), end], named);
  assert.equal(answerFirst.outputs.at(-1), cancelled('k1'));
  // The end clears the turn's run; the answer that comes after it still names the run it stopped.
  const endFirst = run([cancel('k2'), end, ok('k2')], named);
  assert.equal(endFirst.outputs.at(-1), cancelled('k2'));
  assert.is(endFirst.snap.context.run, undefined, 'the turn and its run are over');
  // kill_tools goes to the lane with the interrupt; a cancel without it asks for no kill.
  const kill = run([cancel('k3', { scope: 'run', kill_tools: true })], named);
  assert.equal(kill.outputs, [{ type: 'run.cancel', cause: 'k3', lane: 'app-server', killTools: true }]);
  const plain = run([cancel('k4')], named);
  assert.equal(plain.outputs, [{ type: 'run.cancel', cause: 'k4', lane: 'app-server' }]);
});

test('cancel to a session no lane reaches is refused lane-unreached, saying how to get one; a resend gets the same ack', () => {
  const cancel: SessionInput = {
    type: 'command.cancel',
    at: 1000,
    gateOpen: true,
    ready: true,
    unreached: NATIVE.hint,
    command: command(sender, SESSION, { type: 'control.cancel', id: 'k9', data: { scope: 'run' } }),
  };
  const { outputs } = run([opens(), cancel, cancel]);
  assert.equal(types(outputs), ['reply.neutral', 'control.rejected', 'control.reack']);
  assert.equal((outputs[1] as { rejection?: unknown }).rejection, {
    reason: 'unsupported',
    rule: 'lane-unreached',
    detail:
      'this session runs on the hook lane only, which cannot stop a turn; to be able to stop its turns, start it with `aep-steer run codex`',
  });
});

test('a lost lane is said once per session; a steer it took unread is delivery-unknown, the hook queue keeps its course', () => {
  const { snap, outputs } = run(
    [send('q1', 'queue'), send('c1', 'steer'), answered('c1'), reach(false, 2000), reach(false, 2100)],
    laneRunning(),
  );
  const changed = outputs.filter((o) => o.type === 'lanes.changed');
  assert.equal(changed, [{ type: 'lanes.changed', eventType: `x.${VENDOR}.session.described`, lanes: ['hook'] }]);
  assert.equal((outputs.at(-1) as { reason?: string; cause?: string }).reason, 'delivery-unknown');
  assert.equal(
    snap.context.queue.map((i) => i.id),
    ['q1'],
  );
  // Without the lane a later steer falls to the hook lane, which this table honours inside a turn.
  const later = run([send('c2', 'steer', { at: 2200 })], snap);
  assert.equal(types(later.outputs), ['control.accepted']);
  assert.equal(
    later.snap.context.queue.map((i) => i.id),
    ['q1', 'c2'],
  );
});

test('a reach is said once: the roster sees the hook lane and the native one', () => {
  const live = run([opens(), reach(), reach()]);
  assert.equal(
    live.outputs.filter((o) => o.type === 'lanes.changed'),
    [{ type: 'lanes.changed', eventType: `x.${VENDOR}.session.described`, lanes: ['hook', 'app-server'] }],
  );
});

test('after a restart no lane reaches the session until it says so; a steer it took unread is delivery-unknown', () => {
  const before = run([send('c1', 'steer'), answered('c1')], laneRunning()).snap;
  const { snap, outputs } = run([{ type: 'restart.recovered', at: 9000 }], before);
  assert.equal(types(outputs), ['lanes.changed', 'instruction.dropped']);
  assert.is((outputs[1] as { reason?: string }).reason, 'delivery-unknown');
  assert.equal([snap.context.lanes, snap.context.laned], [[], []]);
});

test('a lane that can take back what it holds is asked; its answer acks the withdraw (D32)', () => {
  const laneWithdraw = (id: string, instruction: string): SessionInput => ({
    ...(withdraw(id, instruction) as Extract<SessionInput, { type: 'command.withdraw' }>),
    laneWithdraws: ['app-server'],
  });
  const answer = (commandId: string, removed?: boolean): SessionInput => ({
    type: 'lane.withdrawn',
    at: 1600,
    commandId,
    ...(removed === undefined ? {} : { removed }),
  });
  const taken = run([send('c1', 'steer'), answered('c1')], laneRunning()).snap;
  const asked = run([laneWithdraw('w1', 'c1'), laneWithdraw('w1', 'c1')], taken);
  assert.equal(asked.outputs[0], { type: 'lane.withdraw', cause: 'w1', instruction: 'c1', lane: 'app-server' });
  assert.equal(types(asked.outputs), ['lane.withdraw', 'control.reack'], 'a resend while it is under way asks once');
  const back = run([answer('w1', true), receipt('c1', 1700)], asked.snap);
  assert.equal(types(back.outputs), ['control.accepted', 'instruction.dropped']);
  assert.equal((back.outputs[1] as { reason: string; subject: string }).subject, 'c1');
  assert.equal((back.outputs[1] as { reason: string }).reason, 'withdrawn');
  assert.equal(back.snap.context.laned, [], 'a late receipt finds nothing to deliver');
  // Read already: refused already-delivered, and the receipt delivers it.
  const read = run([laneWithdraw('w2', 'c1'), answer('w2', false), receipt('c1', 1700)], taken);
  assert.equal(types(read.outputs), ['lane.withdraw', 'control.rejected', 'instruction.delivered']);
  assert.is((read.outputs[1] as { rejection: { rule: string } }).rejection.rule, 'already-delivered');
  // No answer from the lane: refused busy, the instruction goes on waiting for its receipt.
  const down = run([laneWithdraw('w3', 'c1'), answer('w3')], taken);
  assert.is((down.outputs[1] as { rejection: { reason: string } }).rejection.reason, 'busy');
  assert.is(down.snap.context.laned?.length, 1);
  // A restart before the answer: the withdraw is refused, the steer delivery-unknown.
  const restarted = run([laneWithdraw('w4', 'c1'), { type: 'restart.recovered', at: 9000 }], taken);
  assert.equal(types(restarted.outputs), ['lane.withdraw', 'lanes.changed', 'control.rejected', 'instruction.dropped']);
});

test.run();
