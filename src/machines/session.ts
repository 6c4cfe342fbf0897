// One actor per (vendor, session): the machine is data that names its parts, the guards
// (guards.ts) and the pure steps, each in the module of its job.
import { enqueueActions, setup } from 'xstate';
import { guards } from './guards.js';
import { seedContext } from './seed.js';
import { instruct } from './instruct.js';
import { held, holdClosed, respond, timeout } from './attention.js';
import { failed, moment, written } from './moment.js';
import { end, reopen } from './session-end.js';
import { closeWindow, tick } from './ticks.js';
import { recover } from './recover.js';
import type { Step } from './step.js';
import * as inputs from './user-input.js';
import * as cancels from './run-cancel.js';
import * as approvals from './transport-holds.js';
import * as forwards from './forward.js';
import { laneWithdrawn, withdraw, withdrawAnswered } from './withdraw.js';
import { queueVerb } from './queue-verbs.js';
import * as lanes from './lane-steps.js';
import { laneTurnHanding } from './queue-handover.js';
import { compileFold, foldable, type Fold } from './fold.js';
import type { SessionContext, SessionSeed } from './session-context.js';
import type { SessionInput } from './session-input.js';
import type { SessionOutput } from './session-output.js';

type InputOf<T extends SessionInput['type']> = Extract<SessionInput, { type: T }>;

/**
 * An action that applies one pure step: assign its patch, then announce its outputs in order.
 * The step is also registered with the fold (fold.ts), which replays logs without the interpreter.
 */
function step<T extends SessionInput['type']>(type: T, fn: (ctx: SessionContext, input: InputOf<T>) => Step) {
  const pure = (context: SessionContext, event: SessionInput): Step | undefined =>
    event.type === type ? fn(context, event as InputOf<T>) : undefined;
  return foldable(
    enqueueActions<SessionContext, SessionInput, undefined, SessionInput, never, never, never, never, SessionOutput>(
      ({ context, event, enqueue }) => {
        const s = pure(context, event);
        if (s === undefined) return;
        if (s.context) enqueue.assign(s.context);
        for (const o of s.outputs) enqueue.emit(o);
      },
    ),
    pure,
  );
}

export const sessionMachine = setup({
  types: {} as { context: SessionContext; events: SessionInput; emitted: SessionOutput; input: SessionSeed },
  guards,
  actions: {
    enqueue: step('command.instruct', (c, e) => instruct(c, e, false)),
    refuseEnded: step('command.instruct', (c, e) => instruct(c, e, true)),
    answerHold: step('command.respond', respond),
    withdraw: step('command.withdraw', withdraw),
    changeQueue: step('command.queue', (c, e) => queueVerb(c, e, false)),
    changeQueueEnded: step('command.queue', (c, e) => queueVerb(c, e, true)),
    settleWithdraw: step('withdraw.answered', withdrawAnswered),
    deliverPrefix: step('hook.moment', (c, e) => moment(c, e, false)),
    replyNeutral: step('hook.moment', (c, e) => moment(c, e, true)),
    reopen: step('hook.moment', reopen),
    openHold: step('hook.held', (c, e) => held(c, e, false)),
    declineHold: step('hook.held', (c, e) => held(c, e, true)),
    endSession: step('hook.end', end),
    replyEndedAgain: step('hook.end', (_c, e) => ({ outputs: [{ type: 'reply.neutral', hookId: e.hookId }] })),
    markDelivered: step('reply.written', written),
    requeue: step('reply.failed', (c, e) => failed(c, e, false)),
    // Inside a resume window a failed reply's instructions wait for the resumed run (D25).
    dropUnwritten: step('reply.failed', (c, e) => failed(c, e, c.resumeUntil === undefined)),
    expireHold: step('attention.timeout', timeout),
    expireQueued: step('ttl.tick', tick),
    closeWindow: step('window.tick', closeWindow),
    closeWindowFirst: step('command.instruct', closeWindow),
    reportUnknownDelivery: step('restart.recovered', recover),
    sendInput: step('command.send_input', (c, e) => inputs.sendInput(c, e, false)),
    refuseInputEnded: step('command.send_input', (c, e) => inputs.sendInput(c, e, true)),
    markInputSent: step('input.sent', inputs.inputSent),
    dropInputUnsent: step('input.failed', inputs.inputFailed),
    markInputConsumed: step('input.consumed', inputs.inputConsumed),
    forwardCancel: step('command.cancel', (c, e) => cancels.cancel(c, e, false)),
    refuseCancelEnded: step('command.cancel', (c, e) => cancels.cancel(c, e, true)),
    settleCancel: step('cancel.answered', cancels.cancelAnswered),
    openApproval: step('approval.requested', (c, e) => approvals.approvalRequested(c, e, false)),
    ignoreApproval: step('approval.requested', (c, e) => approvals.approvalRequested(c, e, true)),
    mirrorApproval: step('approval.resolved', approvals.approvalResolved),
    dismissLost: step('transport.lost', approvals.transportLost),
    dismissClosed: step('hold.closed', holdClosed),
    forward: step('command.forward', (c, e) => forwards.forward(c, e, false)),
    refuseForwardEnded: step('command.forward', (c, e) => forwards.forward(c, e, true)),
    settleForward: step('forward.settled', forwards.settle),
    reachLane: step('lane.reach', lanes.laneReach),
    settleSteer: step('lane.answered', lanes.laneAnswered),
    deliverSteer: step('lane.delivered', lanes.laneDelivered),
    followLaneTurn: step('lane.turn', laneTurnHanding),
    settleLaneWithdraw: step('lane.withdrawn', laneWithdrawn),
  },
}).createMachine({
  id: 'session',
  initial: 'idle',
  context: ({ input }) => seedContext(input),
  on: {
    'command.instruct': { actions: 'enqueue' },
    'command.respond': { actions: 'answerHold' },
    'command.withdraw': { actions: 'withdraw' },
    'command.queue': { actions: 'changeQueue' },
    'withdraw.answered': { actions: 'settleWithdraw' },
    'hook.moment': { actions: 'deliverPrefix' },
    'hook.held': { actions: 'openHold' },
    'hook.end': { target: '.ended', actions: 'endSession' },
    'reply.written': { actions: 'markDelivered' },
    'reply.failed': { actions: 'requeue' },
    'attention.timeout': { actions: 'expireHold' },
    'ttl.tick': { actions: 'expireQueued' },
    'restart.recovered': { actions: 'reportUnknownDelivery' },
    'command.send_input': { actions: 'sendInput' },
    'input.sent': { actions: 'markInputSent' },
    'input.failed': { actions: 'dropInputUnsent' },
    'input.consumed': { actions: 'markInputConsumed' },
    'command.cancel': { actions: 'forwardCancel' },
    'cancel.answered': { actions: 'settleCancel' },
    'approval.requested': { actions: 'openApproval' },
    'approval.resolved': { actions: 'mirrorApproval' },
    'transport.lost': { actions: 'dismissLost' },
    'hold.closed': { actions: 'dismissClosed' },
    'command.forward': { actions: 'forward' },
    'forward.settled': { actions: 'settleForward' },
    'lane.reach': { actions: 'reachLane' },
    'lane.answered': { actions: 'settleSteer' },
    'lane.delivered': { actions: 'deliverSteer' },
    'lane.turn': { actions: 'followLaneTurn' },
    'lane.withdrawn': { actions: 'settleLaneWithdraw' },
  },
  states: {
    idle: {
      always: [
        { guard: 'hasHolds', target: 'holding' },
        { guard: 'hasPending', target: 'queued' },
      ],
    },
    queued: {
      always: [
        { guard: 'hasHolds', target: 'holding' },
        { guard: 'isQueueEmpty', target: 'idle' },
      ],
    },
    // D13: a held reply is open; eligible moments of the same session may still deliver.
    holding: {
      initial: 'permission',
      always: [
        { guard: 'isReleasedWithPending', target: 'queued' },
        { guard: 'isReleased', target: 'idle' },
      ],
      states: {
        permission: { always: { guard: 'isFirstHoldElicitation', target: 'elicitation' } },
        elicitation: { always: { guard: 'isFirstHoldPermission', target: 'permission' } },
      },
    },
    // D6, D10: nothing is queued after the end; late replies still settle what was in flight.
    // A start moment reopens the session (same id, same dedupe records, same epoch): resumed
    // sessions (`codex exec resume`, `claude --resume`, `qwen --continue`) can be steered again.
    // D25: inside the end moment's resume window the session keeps its queue and takes instructions.
    ended: {
      on: {
        'command.instruct': [
          { guard: 'inResumeWindow', actions: 'enqueue' },
          { actions: ['closeWindowFirst', 'refuseEnded'] },
        ],
        'window.tick': { actions: 'closeWindow' },
        'command.send_input': { actions: 'refuseInputEnded' },
        'command.queue': { actions: 'changeQueueEnded' },
        'command.cancel': { actions: 'refuseCancelEnded' },
        'approval.requested': { actions: 'ignoreApproval' },
        'command.forward': { actions: 'refuseForwardEnded' },
        'hook.moment': [{ guard: 'isStart', target: 'idle', actions: 'reopen' }, { actions: 'replyNeutral' }],
        'hook.held': { actions: 'declineHold' },
        'hook.end': { actions: 'replyEndedAgain' },
        'reply.failed': { actions: 'dropUnwritten' },
      },
    },
  },
});

/** The session machine as a fold for log replay; a string says why it cannot be one (replay then uses transition()). */
export const sessionFold: Fold<SessionContext, SessionInput, SessionOutput> | string = compileFold(sessionMachine);
