// A lane: one way the adapter reaches a vendor's sessions besides answering their hooks. Every
// way in is one: the vendors' own APIs for putting input into a running session (D30: Codex
// app-server, `qwen serve`, Claude Code stream-json) and the vendors' user-plane channels (D28,
// D29: the Cline hub, the OpenHands agent server). A lane declares what it can do by the verbs it
// has; the adapter core calls only those and turns what the lane observes into session inputs
// (lanes.ts). Each vendor's lanes live in its folder. Nothing here runs I/O: the contract only.
import type { Observable } from 'rxjs';
import type { AepCommand, Rejection } from '../protocol/index.js';
import type { AttentionRequestSpec } from './surface.js';
import type { ToolsAtStop } from '../machines/session-context.js';
import type { QueueHandover } from '../machines/vendor-inputs.js';

/** One instruction or input handed to a lane; the command id is the vendor's client message id (D30). */
export interface LaneRequest {
  session: string;
  commandId: string;
  text: string;
}

/**
 * The vendor's answer. `accepted` means the vendor took it for delivery (queued in the running
 * turn, or in its next-turn queue), not that the model read it: the receipt is a `delivered` or
 * `consumed` fact. `turn-ended`: the turn a steer was meant for is over (D31, never retried as a
 * start); `idle`: no turn runs; `unreachable`: the lane is down or the call failed.
 */
export type LaneOutcome =
  /** `became`: a start found a turn begun meanwhile and put the text in as that instead (D43). */
  | { ok: true; ref?: string; became?: 'steer' | 'queue' }
  | { ok: false; reason: 'turn-ended' | 'idle' | 'unreachable' | 'refused'; detail: string };

/** A verb's plain answer: done, or why not. */
export type LaneDone = { ok: true } | { ok: false; detail: string };

/** D32: the vendor gave the input back (`removed`), no longer held it (read), or did not answer. */
export type LaneWithdrawn = { removed: boolean } | { error: string };

/** What a lane observed about one of its sessions. */
export type LaneFact =
  /** The lane reaches this session now (a thread followed, a daemon session seen). */
  | { kind: 'attached'; session: string; at: number }
  | { kind: 'detached'; session: string; at: number; detail: string }
  | { kind: 'turn.started'; session: string; at: number; turnId: string }
  /**
   * `interrupted`: the vendor says the turn was stopped (D33), not finished; with what became of
   * the turn's tool processes (one the vendor left running, or one the lane ended on `killTools`).
   */
  | ({
      kind: 'turn.ended';
      session: string;
      at: number;
      turnId: string;
      status: string;
      interrupted: boolean;
      /** Steers (command ids) still unread that the lane could not take back: the vendor runs them next. */
      kept?: string[];
    } & ToolsAtStop)
  /**
   * The vendor's receipt for a steer or a start: the instruction reached the model's input (`ref`:
   * the vendor's id). `started`: it began the turn (D43), as the lane that started it knows.
   */
  | {
      kind: 'delivered';
      session: string;
      at: number;
      commandId: string;
      ref: string;
      started?: boolean;
      /** D50: taking it moved the running shell command to the background (the command's text). */
      backgrounded?: { command: string };
    }
  /** The vendor's receipt for a send: the agent read the input (found by its text: the vendor names no command). */
  | { kind: 'consumed'; session: string; at: number; text: string }
  /** The vendor asks its user to approve something (answered with `answer`, or in the vendor's own UI). */
  | {
      kind: 'approval';
      session: string;
      at: number;
      approvalId: string;
      request: AttentionRequestSpec & { respondVia?: string[] };
    }
  /** The vendor settled an approval; `approved` absent: cancelled. */
  | { kind: 'approval.resolved'; session: string; at: number; approvalId: string; approved?: boolean }
  /**
   * The whole lane is gone (the daemon died, the channel dropped): every session it reached is
   * hook-lane only again and its open approvals are void. `said`: the lane already told the
   * person why (its own `onError`), so the core does not again.
   */
  | { kind: 'lost'; at: number; detail: string; said?: boolean };

export interface Lane {
  /** Its name in the vendor table, on `instruction.delivered` and in a session's `lanes` (`app-server`, `hub`). */
  readonly name: string;
  /** D31: the instruct deliveries it honours while it reaches a session (`steer`, `queue`); none for a channel. */
  readonly deliveries: readonly string[];
  /**
   * The vendor runs a steer it took but never injected as a prompt of its own once the turn ends
   * (qwen serve 0.24.4): a turn's end leaves it awaiting its receipt instead of dropping it.
   */
  readonly keepsUnread?: boolean;
  /**
   * D44: the vendor cannot change what it holds, so what is queued while a turn runs waits in the
   * session's own queue (every verb works on it) and goes over as this row says when a turn ends
   * normally, or on a resume with no turn running; a stop keeps it for a later turn's end.
   */
  readonly handsQueue?: QueueHandover;
  /** What a person does so the lane reaches a session (`start it with \`aep-steer run codex\``). */
  readonly how: string;
  /**
   * Makes the lane ready for a new session on request (the Codex app-server is started, or an
   * already running one reused) and says where clients connect (`{address}`); absent: always ready.
   */
  open?(): Promise<Record<string, unknown>>;
  /** Whether it steers the session now (a session no lane reaches keeps the hook lane only). */
  reaches(session: string): boolean;
  /** Whether the channel is connected now (a send while it is not is refused `busy`); absent: always. */
  ready?(): boolean;
  /** D31 `steer`: an instruction into the running turn; its receipt is a `delivered` fact. */
  steer?(req: LaneRequest): Promise<LaneOutcome>;
  /** D31 `queue`, where the vendor has a next-turn queue of its own. */
  queue?(req: LaneRequest): Promise<LaneOutcome>;
  /**
   * D43: starts a turn in an idle session with the text as its prompt; where a turn began
   * meanwhile (the person's own), puts the text into it as `otherwise` and answers `became`. Its
   * receipt is a `delivered` fact naming the turn it began.
   */
  startTurn?(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome>;
  /** D28 send_input: the text as the user's own input (`delivery` as the vendor names it); its receipt is `consumed`. */
  send?(req: LaneRequest & { delivery?: string }): Promise<LaneOutcome>;
  /** D32: takes back what the vendor still holds (`text`: how a vendor that names no id finds it). */
  withdraw?(req: Omit<LaneRequest, 'text'> & { text?: string }): Promise<LaneWithdrawn>;
  /**
   * D33: stops the running turn. `killTools`: the tool processes the vendor leaves running are
   * ended too, where the lane can find them (its turn end then names them as `killed`).
   */
  interrupt?(session: string, opts?: { killTools?: boolean }): Promise<LaneDone>;
  /** Answers an approval the vendor raised on this lane (`reason`: the person's words with a deny). */
  answer?(session: string, approvalId: string, approved: boolean, reason?: string): Promise<LaneDone>;
  /**
   * The vendor's own controls (the surface's `controls`, D29): `check` is the vendor's guard from
   * what the lane last showed, before anything is written; `perform` resolves with the refusal
   * when the vendor says no, or undefined once it took the command.
   */
  check?(session: string, command: AepCommand): Rejection | undefined;
  perform?(session: string, command: AepCommand): Promise<Rejection | undefined>;
  readonly facts$: Observable<LaneFact>;
  close(): Promise<void>;
}

/** A lane that steers instructions into turns (D30), as against a user-plane channel. */
export type SteeringLane = Lane & Required<Pick<Lane, 'steer'>>;
export const steers = (l: Lane): l is SteeringLane => l.steer !== undefined;

/** The vendor's user-plane channel among the lanes: where send_input, its cancel and its controls go. */
export const channelOf = (lanes: readonly Lane[]): Lane | undefined =>
  lanes.find((l) => l.send !== undefined || l.perform !== undefined);
