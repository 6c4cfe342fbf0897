// What goes into a session step and what comes out: the item a source delivers, the effects the
// outside performs, and a step's result. A leaf the host, the stamp, the journal and the bus share.
import type { AepCommand, AepEvent } from '../protocol/index.js';
import type { SessionInput } from '../machines/session-input.js';
import type { LogRecord } from './log.js';
import type { ClassifiedHook, HookReply } from './surface.js';
import type { LaneEffect } from './lane-host.js';

/** Something for one session, in arrival order. */
export type SessionItem =
  | {
      kind: 'hook';
      session: string;
      hookId: string;
      at: number;
      hook: ClassifiedHook;
      /** The machine announced the neutral reply and the open hook gave it (D7–D8): decided, not asked again. */
      answered?: 'neutral';
    }
  | { kind: 'command'; session: string; at: number; command: AepCommand }
  | { kind: 'input'; session: string; input: SessionInput };

/** What the outside must do after a step. */
export type Effect =
  /** Write this reply to the waiting hook; `confirm` feeds back reply.written / reply.failed (D9). */
  | { kind: 'reply'; session?: string; hookId: string; reply: HookReply; confirm: boolean }
  /** Answer the waiting hook neutrally (it hands over nothing, D7–D8): the open hook writes that reply itself. */
  | { kind: 'neutral'; session?: string; hookId: string }
  /** The hook's reply waits for a decision; arm the D14 timer. */
  | { kind: 'hold'; session: string; hookId: string; requestId: string; timeoutMs: number }
  /** A call on a lane: a steer, send, withdraw, interrupt, answer or vendor control (D28–D33). */
  | LaneEffect
  /** D45: run the spawner for a spawn the home session logged; its answer comes back as an input. */
  | SpawnEffect;

/** D45: the effect a logged spawn asks for (home.ts): run the spawner, feed its answer back. */
export interface SpawnEffect {
  kind: 'spawn';
  session: string;
  key: string;
  command: AepCommand;
  /** A stop of this worker (the command is its `control.cancel {scope:"session"}`), not a spawn. */
  stop?: string;
}

export interface StepResult {
  /** Events for the sinks, in order (re-acks included). */
  events: AepEvent[];
  /** Step number: `durable(n)` keeps it, `rollback()` undoes it until then (D22). */
  stepNo?: number;
  /** Records for the event log, written before any effect is performed (D12). */
  records: LogRecord[];
  effects: Effect[];
}
