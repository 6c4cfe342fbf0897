// A native lane (D30): the vendor's own API for putting input into a session, beside the hook
// lane. Each vendor's ways in live in its folder (`adapters/codex/app-server/`,
// `adapters/qwen-code/serve/`) and implement this contract; the adapter core sends through it and
// turns what it observes into session inputs. Nothing here runs I/O: the contract only.
import type { Observable } from 'rxjs';
import type { AttentionRequestSpec } from './surface.js';
import type { ToolsAtStop } from '../machines/session-context.js';

/** One instruction handed to a lane; the command id is the vendor's client message id (D30). */
export interface LaneRequest {
  session: string;
  commandId: string;
  text: string;
}

/**
 * The vendor's answer. `accepted` means the vendor took it for delivery (queued in the running
 * turn, or in its next-turn queue), not that the model read it: the receipt is a `delivered`
 * fact. `turn-ended`: the turn the steer was meant for is over (D31, never retried as a start);
 * `idle`: no turn runs; `unreachable`: the lane is down or the call failed.
 */
export type LaneOutcome =
  | { ok: true; ref?: string }
  | { ok: false; reason: 'turn-ended' | 'idle' | 'unreachable' | 'refused'; detail: string };

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
    } & ToolsAtStop)
  /** The vendor's receipt: the instruction reached the model's input (`ref`: the vendor's id). */
  | { kind: 'delivered'; session: string; at: number; commandId: string; ref: string }
  | {
      kind: 'approval';
      session: string;
      at: number;
      approvalId: string;
      request: AttentionRequestSpec & { respondVia?: string[] };
    }
  | { kind: 'approval.resolved'; session: string; at: number; approvalId: string; approved?: boolean }
  /**
   * The whole lane is gone (the daemon died): every session it reached is hook-lane only again.
   * `said`: the lane already told the person why (its own `onError`), so the core does not again.
   */
  | { kind: 'lost'; at: number; detail: string; said?: boolean };

export interface NativeLane {
  /** The lane's name in the vendor table and on `instruction.delivered` (`app-server`, `serve`). */
  readonly name: string;
  /** D31: the deliveries it honours beside the hook lane's (`steer`; `queue` where it has a next-turn queue). */
  readonly deliveries: readonly string[];
  /**
   * The vendor runs a steer it took but never injected as a prompt of its own once the turn ends
   * (qwen serve 0.24.4): a turn's end leaves it awaiting its receipt instead of dropping it.
   */
  readonly keepsUnread?: boolean;
  /** What a person does so the lane reaches a session (`start it with \`aep-steer run codex\``). */
  readonly how: string;
  /**
   * Makes the lane ready for a new session on request (the Codex app-server is started, or an
   * already running one reused) and says where clients connect (`{address}`); absent: always ready.
   */
  open?(): Promise<Record<string, unknown>>;
  /** Whether it reaches the session now (a session it does not reach keeps the hook lane only). */
  reaches(session: string): boolean;
  /** D31 `steer`: into the running turn. */
  steer(req: LaneRequest): Promise<LaneOutcome>;
  /** D31 `queue`, where the vendor has a next-turn queue of its own. */
  queue?(req: LaneRequest): Promise<LaneOutcome>;
  /** D32: takes back what the vendor still holds; `removed` false means it was already read. */
  withdraw?(session: string, commandId: string): Promise<{ removed: boolean } | { error: string }>;
  /**
   * D33: stops the running turn. `killTools`: the tool processes the vendor leaves running are
   * ended too, where the lane can find them (its turn end then names them as `killed`).
   */
  interrupt?(session: string, opts?: { killTools?: boolean }): Promise<{ ok: true } | { ok: false; detail: string }>;
  /** Answers an approval the vendor raised on this lane. */
  answer?(
    session: string,
    approvalId: string,
    approved: boolean,
  ): Promise<{ ok: true } | { ok: false; detail: string }>;
  readonly facts$: Observable<LaneFact>;
  close(): Promise<void>;
}
