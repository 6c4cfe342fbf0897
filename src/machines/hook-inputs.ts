// What the vendor's hooks report to a session actor: a moment, a held request, the end, and
// whether the reply to a hook was written.
import type { AttentionRequest, HoldKind } from './session-context.js';
import type { EndReason } from './session-output.js';

export interface MomentInput {
  type: 'hook.moment';
  at: number;
  hookId: string;
  /** D7, decided by the vendor table before the hook reaches the actor. */
  eligible: boolean;
  /** The vendor's session-start moment: reopens an ended session (a resumed session keeps its id). */
  starts?: boolean;
  /** The vendor's hook event name, named by `instruction.delivered` (D27). */
  moment?: string;
  /** Id of the first observation event of this hook, when there is one. */
  causeId?: string;
  /** The moment opens or closes a turn, or fires only within one (the table says which), for the D28 idle refusal. */
  turn?: 'opens' | 'closes' | 'within';
  /** The run id minted for the turn this moment opens (a vendor that names none). */
  runId?: string;
  /**
   * The moment reports this tool call ran (`call`: the table's call key): a held request for it was
   * answered yes at the agent (D34); `answeredId` names the `attention.answered` that then says so.
   */
  ran?: { call: string; answeredId: string };
  /** The moment echoes this steer (its command id), which a native lane handed over: not a turn of its own. */
  echo?: string;
  /** D27, D43: the moment's prompt is the text of this start (its command id): the turn it began. */
  opener?: string;
  /**
   * The hook already got the neutral reply `repliesNeutral` announced for it (D7–D8): the step
   * takes that as decided and hands the moment nothing.
   */
  answered?: true;
}
export interface HeldInput {
  type: 'hook.held';
  at: number;
  hookId: string;
  /** Id for the `attention.requested` event. */
  requestId: string;
  hold: HoldKind;
  request: AttentionRequest;
  timeoutMs: number;
  causeId?: string;
  /** The tool call the request is about (the table's call key), when the vendor reports its run later. */
  call?: string;
}
/** The vendor closed a held hook before its reply was written: the person answered at the agent or it gave up (D34). */
export interface HoldClosedInput {
  type: 'hold.closed';
  at: number;
  hookId: string;
}
export interface EndInput {
  type: 'hook.end';
  at: number;
  hookId: string;
  /** Carried by `session.ended` (vendor reason mapped by the table). */
  reason: EndReason;
  /** D25 resume window of this end moment (vendor table or `AEP_RESUME_WINDOW_MS`); 0 or absent: none. */
  windowMs?: number;
  causeId?: string;
}
export interface WrittenInput {
  type: 'reply.written';
  at: number;
  hookId: string;
}
export interface FailedInput {
  type: 'reply.failed';
  at: number;
  hookId: string;
}
