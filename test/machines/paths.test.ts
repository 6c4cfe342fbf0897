// Walks the session machine's state graph over a small fixed alphabet and checks, on every
// path, the properties the design promises (D3, D6, D9, D10, D13, AEP-0004 §3 causes), a start
// moment that reopens an ended session included.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { sessionMachine } from '../../src/machines/session.js';
import { decisionKeys } from '../../src/machines/decisions.js';
import { repliesNeutral } from '../../src/machines/moment.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { initialTransition, transition, enqueueActions, type AnyStateMachine } from 'xstate';
import { end, heldPermission, instruct, instructCmd, outputsOf, respond, type Snap } from '../support/session-steps.js';

const TEXTS: Record<string, string> = { c1: 'alpha instruction', c2: 'beta instruction' };

/** A fresh id not used by anything currently open, so ids stay finite and never collide. */
const fresh = (prefix: string, used: string[]): string => {
  for (let i = 0; ; i += 1) if (!used.includes(`${prefix}${i}`)) return `${prefix}${i}`;
};

/** The small alphabet: one instruct (its second use is the retry), moments, one hold at a time. */
const alphabet =
  (wide: boolean) =>
  (s: Snap): SessionInput[] => {
    const ctx = s.context;
    const out: SessionInput[] = [
      instruct('c1', TEXTS.c1),
      ...(wide ? [instruct('c2', TEXTS.c2)] : []),
      {
        type: 'hook.moment',
        at: 2000,
        hookId: fresh(
          'h',
          ctx.inFlight.map((b) => b.hookId),
        ),
        eligible: true,
      },
      { type: 'hook.moment', at: 2000, hookId: 'ineligible', eligible: false },
      end('end'),
      // The vendor's start moment (a resumed session keeps its id).
      { type: 'hook.moment', at: 2000, hookId: 'start', eligible: true, starts: true },
    ];
    if (ctx.holds.length < (wide ? 2 : 1)) {
      const requestId = fresh(
        'r',
        ctx.holds.map((h) => h.requestId),
      );
      out.push(heldPermission(`hp-${requestId}`, requestId));
    }
    const hold = ctx.holds[0];
    if (hold) {
      out.push(respond(`a-${hold.requestId}`, hold.requestId, { option: 'allow' }));
      out.push({ type: 'attention.timeout', at: 60_000, requestId: hold.requestId });
    }
    const batch = ctx.inFlight[0];
    if (batch) {
      out.push({ type: 'reply.written', at: 3000, hookId: batch.hookId });
      out.push({ type: 'reply.failed', at: 3000, hookId: batch.hookId });
    }
    return out;
  };

// Coarse on purpose (value, queue length, in-flight count, holds, which instructs were decided,
// whether session.ended went out):
// each path is replayed from the start in checkPath, so the checks see the real execution.
const serializeState = (s: Snap): string =>
  JSON.stringify([
    s.value,
    s.context.queue.length,
    s.context.inFlight.length,
    s.context.holds.length,
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a decision key joins its parts with NUL
    decisionKeys(s.context.decisions).filter((k) => /\u0000c\d$/.test(k)).length,
    s.context.endedOnce,
  ]);

const ALL = ['moment', 'steer', 'queue'];
const withDelivery = (id: string, delivery: string): SessionInput => {
  const i = instruct(id, TEXTS[id]) as Extract<SessionInput, { type: 'command.instruct' }>;
  return { ...i, deliveries: ALL, command: { ...i.command, data: { text: TEXTS[id], delivery } } };
};
const withdrawOf = (id: string, instruction: string): SessionInput => ({
  type: 'command.withdraw',
  at: 1500,
  gateOpen: true,
  command: { ...instructCmd(id, ''), type: 'x.claude-code.control.withdraw', data: { instruction } },
});

/** D31, D32: a steer and a queued instruction, the moments of a turn, a withdraw, the reply's confirmation. */
const deliveryAlphabet = (s: Snap): SessionInput[] => {
  const out: SessionInput[] = [
    withDelivery('c1', 'steer'),
    withDelivery('c2', 'queue'),
    withdrawOf('w1', 'c1'),
    withdrawOf('w2', 'c2'),
    {
      type: 'hook.moment',
      at: 2000,
      hookId: fresh(
        'o',
        s.context.inFlight.map((b) => b.hookId),
      ),
      eligible: true,
      turn: 'opens',
    },
    {
      type: 'hook.moment',
      at: 2000,
      hookId: fresh(
        'h',
        s.context.inFlight.map((b) => b.hookId),
      ),
      eligible: true,
    },
    { type: 'hook.moment', at: 2000, hookId: 'closes', eligible: false, turn: 'closes' },
    end('end'),
  ];
  const batch = s.context.inFlight[0];
  if (batch) out.push({ type: 'reply.written', at: 3000, hookId: batch.hookId });
  return out;
};
const deliveryState = (s: Snap): string =>
  JSON.stringify([
    s.value,
    s.context.queue.map((i) => i.id),
    s.context.inFlight.length,
    s.context.turnOpen,
    (s.context.finished ?? []).map((f) => `${f.id}:${f.how}`),
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a decision key joins its parts with NUL
    decisionKeys(s.context.decisions).filter((k) => /\u0000[cw]\d$/.test(k)).length,
    s.context.endedOnce,
  ]);

const narrow = { events: alphabet(false), serializeState, limit: 50_000 };
const wide = { events: alphabet(true), serializeState, limit: 50_000 };

/** Replays a path's inputs from the start and checks every promise on it. */
function checkPath(inputs: readonly SessionInput[], machine: AnyStateMachine = sessionMachine): void {
  let snap = initialTransition(machine, { session: 's-1', vendor: 'claude-code' })[0] as Snap;
  const accepted = new Set<string>();
  const settled = new Map<string, number>();
  const openRequests = new Set<string>();
  let ended = false;
  let sessionEnds = 0;
  const chosen = new Map<string, unknown>();
  const where = () => inputs.map((i) => i.type).join(' > ');
  for (const input of inputs) {
    if (input.type === 'command.instruct')
      chosen.set(input.command.id, (input.command.data as { delivery?: unknown }).delivery);
    const turnWas = snap.context.turnOpen;
    // The adapter answers these moments before stepping them (D7–D8): the machine must agree.
    const early = input.type === 'hook.moment' && repliesNeutral(snap, input);
    const [nextSnap, actions] = transition(machine, snap, input);
    if (early) {
      // The adapter steps it with the answer it gave: the step takes it as decided, to the same end.
      const [taken, takenActions] = transition(machine, snap, { ...input, answered: true });
      assert.equal(
        [taken.value, taken.context, outputsOf(takenActions)],
        [nextSnap.value, nextSnap.context, outputsOf(actions)],
        `an early answer taken as decided steps as the machine would: ${where()}`,
      );
    }
    const next = nextSnap as Snap;
    const outputs = outputsOf(actions);
    for (const o of outputs) checkOutput(o, input, turnWas);
    if (early) {
      const replies = outputs.filter((o) => o.type.startsWith('reply.') || o.type === 'journal.inflight');
      assert.equal(
        replies,
        [{ type: 'reply.neutral', hookId: (input as { hookId: string }).hookId }],
        `a moment answered early gets the neutral reply and nothing else: ${where()}`,
      );
    }
    snap = next;
    const reopens = input.type === 'hook.moment' && input.starts === true;
    if (ended && !reopens) {
      assert.equal(snap.context.queue, [], `nothing is queued after ended until a start moment: ${where()}`);
      assert.not.ok(
        outputs.some((o) => o.type === 'control.accepted'),
        `no accept after ended until a start moment: ${where()}`,
      );
    }
    if (ended && reopens) assert.is(snap.value, 'idle', `a start moment reopens an ended session: ${where()}`);
    if (!ended && input.type === 'hook.end')
      assert.is(snap.value, 'ended', `the end moment ends the session: ${where()}`);
    ended = snap.value === 'ended';
  }
  for (const [id, n] of settled) assert.is(n, 1, `${id} settled exactly once: ${where()}`);
  assert.ok(sessionEnds <= 1, `session.ended at most once per session: ${where()}`);
  const pending = new Set([...snap.context.queue, ...snap.context.inFlight.flatMap((b) => b.items)].map((i) => i.id));
  for (const id of accepted) {
    assert.is(settled.has(id) !== pending.has(id), true, `${id} is either pending or settled: ${where()}`);
  }
  if (ended) {
    for (const id of accepted)
      assert.ok(
        settled.has(id) || snap.context.inFlight.some((b) => b.items.some((i) => i.id === id)),
        `${id} settled by the end: ${where()}`,
      );
  }

  function checkOutput(o: SessionOutput, input: SessionInput, turnWas: boolean): void {
    const commandId = 'command' in input ? input.command.id : undefined;
    switch (o.type) {
      case 'control.accepted':
      case 'control.rejected':
      case 'control.reack':
        assert.is(o.cause, commandId, `ack cause is the command id: ${where()}`);
        if (o.type === 'control.accepted' && input.type === 'command.instruct') accepted.add(o.cause);
        break;
      case 'instruction.delivered':
      case 'instruction.dropped': {
        // D32: a withdrawn instruction's drop is caused by the withdraw and names it as subject.
        const id = o.type === 'instruction.dropped' && o.reason === 'withdrawn' ? o.subject! : o.cause;
        if (o.type === 'instruction.dropped' && o.reason === 'withdrawn')
          assert.is(o.cause, commandId, `withdrawn is caused by the withdraw: ${where()}`);
        assert.ok(accepted.has(id), `${o.type} names an accepted command: ${where()}`);
        if (o.type === 'instruction.delivered' && o.delivery !== undefined)
          assert.is(
            o.delivery,
            (chosen.get(id) as string | undefined) ?? 'moment',
            `delivered names its delivery: ${where()}`,
          );
        settled.set(id, (settled.get(id) ?? 0) + 1);
        break;
      }
      case 'attention.requested':
        assert.is(o.id, input.type === 'hook.held' ? input.requestId : undefined);
        openRequests.add(o.id);
        break;
      case 'attention.answered':
        assert.ok(openRequests.has(o.subject), `answered names an open request: ${where()}`);
        assert.is(o.cause, commandId);
        break;
      case 'attention.resolved':
      case 'attention.timeout':
        assert.ok(openRequests.delete(o.subject), `one terminal per request: ${where()}`);
        break;
      case 'reply.decision':
        assert.ok(o.hookId.startsWith('hp-'), 'decisions answer held hooks only');
        for (const t of Object.values(TEXTS))
          assert.not.ok(JSON.stringify(o).includes(t), `held reply carries no steering: ${where()}`);
        break;
      case 'reply.context':
        assert.not.ok(o.hookId.startsWith('hp-'), `steering never rides a held reply: ${where()}`);
        if (input.type === 'hook.moment') {
          for (const id of o.ids) {
            // D31: queue rides only a turn's first moment; steer only a moment inside a running turn.
            if (chosen.get(id) === 'queue')
              assert.is(input.turn, 'opens', `queue rides only the first moment of a turn: ${where()}`);
            if (chosen.get(id) === 'steer')
              assert.ok(turnWas && input.turn !== 'opens', `steer rides only a moment inside a turn: ${where()}`);
          }
        }
        break;
      case 'session.ended':
        sessionEnds += 1;
        assert.is(input.type, 'hook.end', `only the end moment ends the session: ${where()}`);
        break;
      case 'session.closed':
        assert.ok(
          sessionEnds === 1 && input.type === 'hook.end',
          `closed only at an end after session.ended: ${where()}`,
        );
        break;
      case 'session.reopened':
        assert.ok(
          input.type === 'hook.moment' && input.starts === true && ended,
          `reopened only by a start moment of an ended session: ${where()}`,
        );
        break;
      default:
        break;
    }
  }
}

test('every simple path keeps the delivery, hold, end and cause promises', () => {
  const paths = getSimplePaths(sessionMachine, { ...narrow, input: { session: 's-1', vendor: 'claude-code' } });
  assert.ok(paths.length > 100, `the walk covers many paths (${paths.length})`);
  for (const p of paths)
    checkPath(p.steps.map((s) => s.event as SessionInput).filter((e) => e.type !== ('xstate.init' as string)));
});

test('every path of steer, queue and withdraw delivers each where it may and settles it once (D31, D32)', () => {
  const opts = {
    events: deliveryAlphabet,
    serializeState: deliveryState,
    limit: 50_000,
    input: { session: 's-1', vendor: 'claude-code' },
  };
  // Simple paths over this alphabet are too many to walk; the shortest path to every state is walked here and
  // fold.test.ts checks random sequences of the same inputs.
  const paths = getShortestPaths(sessionMachine, opts);
  assert.ok(paths.length > 50, `the walk reaches many states (${paths.length})`);
  const outcomes = new Set<string>();
  for (const p of paths) {
    const inputs = p.steps.map((s) => s.event as SessionInput).filter((e) => e.type !== ('xstate.init' as string));
    checkPath(inputs);
    let snap = initialTransition(sessionMachine, { session: 's-1', vendor: 'claude-code' })[0] as Snap;
    for (const i of inputs) {
      const [next, actions] = transition(sessionMachine, snap, i);
      for (const o of outputsOf(actions))
        if (o.type === 'instruction.delivered' || o.type === 'instruction.dropped')
          outcomes.add(`${o.type}:${'reason' in o ? o.reason : o.delivery}`);
      snap = next as Snap;
    }
  }
  // The walk reaches each outcome, so the checks above are not vacuous.
  for (const o of [
    'instruction.delivered:steer',
    'instruction.delivered:queue',
    'instruction.dropped:withdrawn',
    'instruction.dropped:turn-ended',
    'instruction.dropped:session-ended',
  ]) {
    assert.ok(outcomes.has(o), `the walk reaches ${o}`);
  }
});

test('shortest paths reach every state, ended and both holding substates included', () => {
  const paths = getShortestPaths(sessionMachine, { ...wide, input: { session: 's-1', vendor: 'claude-code' } });
  const values = new Set(paths.map((p) => JSON.stringify(p.state.value)));
  for (const v of ['"idle"', '"queued"', '{"holding":"permission"}', '"ended"'])
    assert.ok(values.has(v), `reaches ${v}`);
  // A path through end, start and an accepted instruct exists: the reopened session takes steering.
  const simple = getSimplePaths(sessionMachine, { ...narrow, input: { session: 's-1', vendor: 'claude-code' } });
  const reopenedAccept = simple.some((p) => {
    const types = p.steps.map((st) => st.event as SessionInput);
    const endAt = types.findIndex((e) => e.type === 'hook.end');
    const startAt = types.findIndex((e, i) => i > endAt && e.type === 'hook.moment' && e.starts === true);
    return (
      endAt >= 0 &&
      startAt > endAt &&
      types.slice(startAt).some((e) => e.type === 'command.instruct') &&
      p.state.context.queue.length > 0
    );
  });
  assert.ok(reopenedAccept, 'the walk reaches a reopened session holding an accepted instruction');
  for (const p of paths)
    checkPath(p.steps.map((s) => s.event as SessionInput).filter((e) => e.type !== ('xstate.init' as string)));
});

test('the walk catches a machine that settles an instruction twice', () => {
  const inputs: SessionInput[] = [
    instruct('c1', TEXTS.c1),
    { type: 'hook.moment', at: 2000, hookId: 'h0', eligible: true },
    { type: 'reply.written', at: 3000, hookId: 'h0' },
  ];
  assert.not.throws(() => checkPath(inputs));
  // A machine that announces delivery but keeps the batch delivers again on a second confirmation.
  const deliverTwice = sessionMachine.provide({
    actions: {
      markDelivered: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'reply.written') return;
        for (const b of context.inFlight)
          for (const i of b.items)
            enqueue.emit({
              type: 'instruction.delivered',
              eventType: 'x.claude-code.instruction.delivered',
              cause: i.id,
              queuedMs: 0,
            });
      }),
    },
  });
  let caught = '';
  try {
    checkPath([...inputs, { type: 'reply.written', at: 3100, hookId: 'h0' }], deliverTwice);
  } catch (e) {
    caught = (e as Error).message;
  }
  assert.match(caught, /settled exactly once/);
});

test('the walk catches a machine whose start moment does not reopen an ended session', () => {
  const inputs: SessionInput[] = [
    end('end'),
    { type: 'hook.moment', at: 2000, hookId: 'start', eligible: true, starts: true },
  ];
  assert.not.throws(() => checkPath(inputs));
  const stuck = sessionMachine.provide({ guards: { isStart: () => false } });
  let caught = '';
  try {
    checkPath(inputs, stuck);
  } catch (e) {
    caught = (e as Error).message;
  }
  assert.match(caught, /reopens an ended session/);
});

test('the walk catches an early answer that would swallow a delivery', () => {
  const inputs: SessionInput[] = [
    instruct('c1', TEXTS.c1),
    { type: 'hook.moment', at: 2000, hookId: 'h0', eligible: true },
  ];
  assert.not.throws(() => checkPath(inputs));
  // A machine that queues nothing on instruct makes the moment neutral; one that delivers on an
  // ineligible moment contradicts the early answer for it.
  const eager = sessionMachine.provide({
    actions: {
      replyNeutral: enqueueActions(({ event, enqueue }) => {
        if (event.type === 'hook.moment')
          enqueue.emit({ type: 'reply.context', hookId: event.hookId, text: 'x', ids: [], from: [] });
      }),
    },
  });
  let caught = '';
  try {
    checkPath([end('end'), { type: 'hook.moment', at: 2000, hookId: 'late', eligible: true }], eager);
  } catch (e) {
    caught = (e as Error).message;
  }
  assert.match(caught, /answered early/);
});

test.run();

export { alphabet, serializeState };
