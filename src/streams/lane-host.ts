// What the actor host does for native lanes (D30–D33), kept apart from it: recognise a vendor's
// echo of a steer at a hook moment, route control.cancel to a lane that can stop the turn, and
// turn the lane outputs into events and effects. Pure: the lanes themselves are reached in run.ts.
import type { AepCommand, EventFields } from '../protocol/index.js';
import { redactText } from '../protocol/redact.js';
import type { ClassifiedHook } from './surface.js';
import type { SessionContext, ToolProcess } from '../machines/session-context.js';
import type { SessionInput } from '../machines/session-input.js';
import type { SessionOutput } from '../machines/session-output.js';

/** What the host knows of the attached lanes (their names never matter to it, only what they add). */
export interface LaneHostOptions {
  /** D31: the deliveries a native lane adds while it reaches a session, and how a session gets one. */
  native: { deliveries: readonly string[]; hint: string };
  /** D33: a reaching lane can stop the session's turn. */
  interrupts: boolean;
  /** D32: the lanes that can take back what they hold. */
  withdraws: readonly string[];
}

export type LaneEffect =
  | { kind: 'lane.steer'; session: string; lane: string; commandId: string; text: string; delivery?: 'queue' }
  | { kind: 'lane.interrupt'; session: string; lane: string; commandId: string; killTools?: true }
  | { kind: 'lane.answer'; session: string; lane: string; approvalId: string; approved: boolean }
  | { kind: 'lane.withdraw'; session: string; lane: string; commandId: string; instruction: string };

/** A lane's approval as the session holds it (`external`): the lane's name, then the vendor's own id. */
export const laneApproval = (lane: string, id: string): string => `lane:${lane}:${id}`;
const fromLaneApproval = (external: string): { lane: string; id: string } | undefined => {
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

/** The lane outputs as events (`emit`) and effects; false for an output that is not a lane's. */
export function stampLane(
  o: SessionOutput,
  session: string,
  emit: (f: EventFields) => void,
  effects: { push(e: LaneEffect): unknown },
): boolean {
  switch (o.type) {
    case 'lane.steer':
      effects.push({
        kind: 'lane.steer',
        session,
        lane: o.lane,
        commandId: o.cause,
        text: o.text,
        ...(o.delivery === undefined ? {} : { delivery: o.delivery }),
      });
      return true;
    case 'lane.withdraw':
      effects.push({ kind: 'lane.withdraw', session, lane: o.lane, commandId: o.cause, instruction: o.instruction });
      return true;
    case 'run.cancel':
      if (o.lane === undefined) return false;
      effects.push({
        kind: 'lane.interrupt',
        session,
        lane: o.lane,
        commandId: o.cause,
        ...(o.killTools === true ? { killTools: true } : {}),
      });
      return true;
    case 'approval.answer': {
      const a = fromLaneApproval(o.approvalId);
      if (a === undefined) return false;
      const approved = o.decision.option === 'allow' || o.decision.option === 'approve';
      effects.push({ kind: 'lane.answer', session, lane: a.lane, approvalId: a.id, approved });
      return true;
    }
    case 'lanes.changed':
      emit({ type: o.eventType, data: { lanes: o.lanes } });
      return true;
    default:
      return false;
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
