// What the actor host does for lanes (D28–D33), kept apart from it: recognise a vendor's echo of a
// steer at a hook moment, route control.cancel to a lane that can stop the turn, and turn the
// outputs that ask a lane for something into the one lane effect. Pure: lanes.ts reaches the lanes.
import type { AepCommand, EventFields } from '../protocol/index.js';
import { redactText } from '../protocol/redact.js';
import type { ClassifiedHook } from './surface.js';
import type { SessionContext, ToolProcess } from '../machines/session-context.js';
import type { SessionInput } from '../machines/session-input.js';
import type { LaneStarts, NativeLanes } from '../machines/command-inputs.js';
import type { SessionOutput } from '../machines/session-output.js';
import { decidedByData } from '../machines/decided-by.js';

/** What the host knows of the attached lanes (their names never matter to it, only what they add). */
export interface LaneHostOptions {
  /** D31: the deliveries a native lane adds while it reaches a session, and how a session gets one. */
  native: NativeLanes;
  /** D33: a reaching lane can stop the session's turn. */
  interrupts: boolean;
  /** D32: the lanes that can take back what they hold. */
  withdraws: readonly string[];
}

/** One call on a lane, by verb; its answer comes back to the session as the input the verb names. */
export type LaneCall =
  /** D31: into the running turn (or the lane's next-turn queue); answered by lane.answered. */
  | { verb: 'steer'; commandId: string; text: string; delivery?: 'queue' }
  /** D43: a turn started with the text (or, one running, the text put in as `otherwise`); answered by lane.answered. */
  | { verb: 'start'; commandId: string; text: string; otherwise: 'steer' | 'queue' }
  /** D28 send_input; answered by input.sent / input.failed. */
  | { verb: 'send'; commandId: string; text: string; delivery?: string }
  /** D33: stop the running turn; answered by cancel.answered. */
  | { verb: 'interrupt'; commandId: string; killTools?: true }
  /**
   * D32: take back `target`: an instruction the lane took (answered by lane.withdrawn) or a
   * send_input the channel holds, found by its text (answered by withdraw.answered).
   */
  | { verb: 'withdraw'; commandId: string; target: string; of: 'instruction' | 'input'; text?: string }
  /** Answer an approval the lane raised; the answer is on the stream already, so nothing comes back. */
  | { verb: 'answer'; approvalId: string; approved: boolean; reason?: string }
  /** Carry one of the vendor's own controls out (D29); answered by forward.settled. */
  | { verb: 'perform'; command: AepCommand };

/** The one effect a step asks of a lane. `lane` absent: the vendor's user-plane channel. */
export type LaneEffect = { kind: 'lane'; session: string; lane?: string; call: LaneCall };

/** D43: whether a turn can be started in a session reached by `lanes` (the channel reaches every one). */
export const startable = (lanes: readonly string[], starts: LaneStarts | undefined): boolean =>
  starts !== undefined && (starts.channel !== undefined || lanes.some((l) => starts.lanes.includes(l)));

/** A lane's approval as the session holds it (`external`): the lane's name, then the vendor's own id. */
export const laneApproval = (lane: string, id: string): string => `lane:${lane}:${id}`;
export const fromLaneApproval = (external: string): { lane: string; id: string } | undefined => {
  const m = /^lane:([^:]+):(.*)$/.exec(external);
  return m === null ? undefined : { lane: m[1]!, id: m[2]! };
};

/**
 * A hook moment whose prompt is the text of a steer a lane took is the vendor's echo of it (Codex
 * 0.171.0 fires UserPromptSubmit once per steer): not a person's prompt, not a turn of its own. It
 * keeps its name and is stepped as the echo, without its observations (no `run.started`) and
 * without a title.
 */
export function asEcho(hook: ClassifiedHook, ctx: SessionContext | undefined): ClassifiedHook {
  const prompt = hook.about?.prompt;
  const echo = prompt === undefined ? undefined : ctx?.echoes?.find((e) => e.text === prompt);
  if (echo === undefined || hook.class.kind !== 'moment') return hook;
  const { prompt: _prompt, ...about } = hook.about ?? {};
  const { bounds: _bounds, ...rest } = hook;
  return { ...rest, class: { kind: 'moment', eligible: false }, observations: [], about, echo: echo.id };
}

/**
 * D27, D43: a hook moment whose prompt is the text of a start a lane was handed is the first moment
 * of the turn that start began: its reply tells the person who started the turn.
 */
export function asOpened(hook: ClassifiedHook, ctx: SessionContext | undefined): ClassifiedHook {
  const prompt = hook.about?.prompt;
  const opener = prompt === undefined ? undefined : ctx?.openers?.find((o) => o.text === prompt);
  return opener === undefined || hook.class.kind !== 'moment' || hook.echo !== undefined
    ? hook
    : { ...hook, opener: opener.id };
}

/**
 * D33: control.cancel goes to the lane that reaches the session, where one can stop its turn. A
 * session no such lane reaches (and whose vendor has no other way to cancel) is told how to get one.
 */
export function laneCancel(
  command: AepCommand,
  at: number,
  ctx: SessionContext | undefined,
  opts: LaneHostOptions | undefined,
  gateOpen: boolean,
  otherwise: boolean,
): SessionInput | undefined {
  if (command.type !== 'control.cancel' || opts?.interrupts !== true) return undefined;
  const lane = ctx?.lanes?.[0];
  if (lane !== undefined) return { type: 'command.cancel', at, command, gateOpen, ready: true, lane };
  return otherwise
    ? undefined
    : { type: 'command.cancel', at, command, gateOpen, ready: true, unreached: opts.native.hint };
}

/** The outputs that ask a lane for something, as the effect; undefined for any other output. */
export function laneEffectOf(o: SessionOutput, session: string): LaneEffect | undefined {
  const on = (call: LaneCall, lane?: string): LaneEffect => ({
    kind: 'lane',
    session,
    ...(lane === undefined ? {} : { lane }),
    call,
  });
  switch (o.type) {
    case 'lane.steer':
      return on(
        o.start !== undefined
          ? { verb: 'start', commandId: o.cause, text: o.text, otherwise: o.start }
          : {
              verb: 'steer',
              commandId: o.cause,
              text: o.text,
              ...(o.delivery === undefined ? {} : { delivery: o.delivery }),
            },
        o.lane,
      );
    case 'input.send':
      return on({
        verb: 'send',
        commandId: o.cause,
        text: o.text,
        ...(o.delivery === undefined ? {} : { delivery: o.delivery }),
      });
    case 'lane.withdraw':
      return on({ verb: 'withdraw', commandId: o.cause, target: o.instruction, of: 'instruction' }, o.lane);
    case 'input.withdraw':
      return on({ verb: 'withdraw', commandId: o.cause, target: o.subject, of: 'input', text: o.text });
    case 'run.cancel':
      return on(
        { verb: 'interrupt', commandId: o.cause, ...(o.killTools === true ? { killTools: true } : {}) },
        o.lane,
      );
    case 'control.forward':
      return on({ verb: 'perform', command: o.command });
    case 'approval.answer': {
      // A hold restored from a log written before approvals named their lane goes to the channel.
      const a = fromLaneApproval(o.approvalId);
      const approved = o.decision.option === 'allow' || o.decision.option === 'approve';
      const reason = o.decision.message;
      return on(
        { verb: 'answer', approvalId: a?.id ?? o.approvalId, approved, ...(reason === undefined ? {} : { reason }) },
        a?.lane,
      );
    }
    default:
      return undefined;
  }
}

const toolData = (t: ToolProcess): Record<string, unknown> => ({
  ...(t.pid === undefined ? {} : { pid: t.pid }),
  command: redactText(t.command),
});

/**
 * D33: `run.cancelled {by: "control"}` as it goes out: its run, and the tool processes the vendor
 * left running (`left_running`) or the lane ended (`killed`). A command line is redacted-class
 * text (as a permission request's command is, D35): a metadata watcher sees the pids only.
 */
export function cancelledFields(o: Extract<SessionOutput, { type: 'run.cancelled' }>): EventFields {
  const data: Record<string, unknown> = { by: 'control' };
  if (o.decidedBy !== undefined) data.decided_by = decidedByData(o.decidedBy);
  if (o.leftRunning?.length) data.left_running = o.leftRunning.map(toolData);
  if (o.killed?.length) data.killed = o.killed.map(toolData);
  const tools = data.left_running !== undefined || data.killed !== undefined;
  return {
    type: 'run.cancelled',
    cause: o.cause,
    ...(o.run === undefined ? {} : { run: o.run }),
    data,
    ...(tools ? { capture: 'redacted' as const } : {}),
  };
}
