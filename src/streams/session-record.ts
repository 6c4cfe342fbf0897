// One session as the actor host keeps it, and the one place the session machine is stepped.
// A record holds the session's cell (its machine state), its position in the stream (next seq,
// epoch, the emitter that stamps it), and the decisions taken for it before it had a cell (D6).
//
// The machine is stepped one of three ways, all here (docs/architecture.md):
// - folded (machines/fold.ts): the machine's own definition applied without the interpreter;
//   the default, live and on replay, for a session kept as data;
// - transition(): XState's pure step over a shared scope, when the machine cannot be folded;
// - a live actor: only under inspection, so the inspector sees every event and transition.
import { createActor, type Actor, type InspectionEvent, type Observer, type SnapshotFrom } from 'xstate';
import { SteeringError, type SessionEmitter } from '../protocol/index.js';
import { sessionFold, sessionMachine } from '../machines/session.js';
import type { AckDecision, SessionContext } from '../machines/session-context.js';
import type { SessionInput } from '../machines/session-input.js';
import type { SessionOutput } from '../machines/session-output.js';

type SessionActor = Actor<typeof sessionMachine>;
type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;
type SessionScope = Parameters<typeof sessionMachine.transition>[2];
export type StateValue = SessionSnapshot['value'];

/**
 * A session's machine state: its state value and context, or, under inspection, a live actor.
 * An actor and its system cost ~4 KB each; a session kept as data costs about what its context
 * does, which matters with many idle sessions.
 */
export type SessionCell = { actor?: undefined; value: StateValue; context: SessionContext } | { actor: SessionActor };

/** A cell as plain data: what an undo restores and a snapshot persists. */
export interface CellState {
  value: unknown;
  context: SessionContext;
}

export interface SessionRecord {
  readonly session: string;
  /** Undefined until a hook moment brings the session into being. */
  cell?: SessionCell;
  /** Next seq (AEP-0001 §7); unset until the session emitted in this process. */
  seq?: number;
  /** The epoch this process's events take (set by replay: previous max + 1, D11). */
  epoch?: number;
  /** The emitter that stamped this session lately, reused while the position agrees with it. */
  emitter?: SessionEmitter;
  /** Decisions for commands that came before the session had a cell (D6). */
  orphan?: Record<string, AckDecision>;
  /** D37: what this process has described of the session (session.described). */
  described?: { cwd?: string; titled: boolean };
}

/** What one step changed, so a step whose records never became durable can be undone (D22). */
export interface Undo {
  stepNo: number;
  session: string;
  /** Whether the session had a record before the step; if not, undoing the step removes it. */
  existed: boolean;
  /** The record's cell before the step; undefined when the step spawned it. */
  cell: CellState | undefined;
  seq: number | undefined;
  orphan: Record<string, AckDecision> | undefined;
  /** Ack keys the step recorded, with what they held before. */
  acks: [string, string | undefined][];
  hookId: string | undefined;
}

export const stateValueOf = (cell: SessionCell): StateValue =>
  cell.actor ? cell.actor.getSnapshot().value : cell.value;
export const contextOf = (cell: SessionCell): SessionContext =>
  cell.actor ? cell.actor.getSnapshot().context : cell.context;
export const cellState = (cell: SessionCell): CellState => ({ value: stateValueOf(cell), context: contextOf(cell) });

/** Steps session cells, whichever of the three ways applies, and collects what they announce. */
export class SessionStepper {
  private collecting: SessionOutput[] | undefined;
  private pureScope: SessionScope | undefined;
  private readonly fold = typeof sessionFold === 'string' ? undefined : sessionFold;

  constructor(
    private readonly vendor: string,
    private readonly inspect?: Observer<InspectionEvent> | ((e: InspectionEvent) => void),
  ) {}

  /**
   * A new session's cell. `muted` (replay) folds the initial state where the fold serves; the
   * live path builds XState's initial snapshot.
   */
  spawn(session: string, decisions: Record<string, AckDecision> | undefined, muted = false): SessionCell {
    const input = { session, vendor: this.vendor, ...(decisions ? { decisions } : {}) };
    if (this.inspect) {
      const actor = createActor(sessionMachine, { input, inspect: this.inspect });
      actor.on('*', (o) => this.collecting?.push(o));
      actor.start();
      return { actor };
    }
    if (muted && this.fold) {
      const initial = this.fold.initial(input);
      return { value: initial.value as StateValue, context: initial.context };
    }
    const initial = sessionMachine.getInitialSnapshot(this.scope(), input);
    return { value: initial.value, context: initial.context };
  }

  /** A cell from persisted data: a live actor under inspection, data otherwise. */
  restore(session: string, s: CellState): SessionCell {
    if (!this.inspect) return { value: s.value as StateValue, context: s.context };
    const persisted = sessionMachine.getPersistedSnapshot(
      sessionMachine.resolveState({ value: s.value as StateValue, context: s.context }),
    );
    const actor = createActor(sessionMachine, {
      input: { session, vendor: this.vendor },
      snapshot: persisted,
      inspect: this.inspect,
    });
    actor.on('*', (o) => this.collecting?.push(o));
    actor.start();
    return { actor };
  }

  /** The cell's persisted snapshot (D24). */
  persisted(cell: SessionCell): { value: unknown; context: SessionContext; status?: string } {
    const p = cell.actor
      ? cell.actor.getPersistedSnapshot()
      : sessionMachine.getPersistedSnapshot(sessionMachine.resolveState({ value: cell.value, context: cell.context }));
    return p as unknown as { value: unknown; context: SessionContext; status?: string };
  }

  /**
   * Steps the cell by one input and returns what it announced. A cell kept as data changes only
   * once the whole step succeeded. `muted` (replay) folds in place and collects nothing.
   */
  advance(cell: SessionCell, input: SessionInput, muted = false): SessionOutput[] {
    const outputs: SessionOutput[] = [];
    if (muted && this.fold && !cell.actor) {
      this.fold.step(cell, input);
      return outputs;
    }
    this.collecting = outputs;
    try {
      if (cell.actor) {
        cell.actor.send(input);
      } else if (this.fold) {
        // The machine's own definition folded, which reaches what transition() reaches, outputs in
        // order (test/machines/fold.test.ts), without building an XState snapshot per step.
        const next = { value: cell.value, context: cell.context };
        this.fold.step(next, input, outputs);
        cell.value = next.value as StateValue;
        cell.context = next.context;
      } else {
        // The same microsteps an actor runs.
        const next = sessionMachine.transition(
          sessionMachine.resolveState({ value: cell.value, context: cell.context }),
          input,
          this.scope(),
        );
        cell.value = next.value;
        cell.context = next.context;
      }
    } finally {
      this.collecting = undefined;
    }
    return outputs;
  }

  /** Whether replay may fold into this cell (or spawn one by folding). */
  folds(cell: SessionCell | undefined): boolean {
    return this.fold !== undefined && !this.inspect && cell?.actor === undefined;
  }

  /**
   * One actor scope for every unobserved session. XState's standalone transition() builds a new
   * actor and system per call (most of a step's cost); the session machine spawns nothing and
   * its only effects are emits, which this scope collects, so one scope serves every session.
   */
  private scope(): SessionScope {
    if (!this.pureScope) {
      const self = createActor(sessionMachine, { input: { session: '', vendor: this.vendor } });
      const none = (): void => undefined;
      this.pureScope = {
        self,
        id: '',
        sessionId: '',
        system: self.system,
        logger: none,
        defer: none,
        stopChild: none,
        emit: none,
        actionExecutor: (a) => {
          if (a.type !== 'xstate.emit')
            throw new SteeringError(
              'INTERNAL',
              `session machine action ${a.type} has an effect; only emits are expected`,
            );
          this.collecting?.push((a.params as { event: SessionOutput }).event);
        },
      };
    }
    return this.pureScope;
  }
}

export interface SessionView {
  session: string;
  state: string;
  queue: { id: string; acceptedAt: number; chars: number }[];
  inFlight: number;
  holds: { requestId: string; hold: string }[];
  /** Accepted send_inputs the vendor has not settled (D28). */
  inputs: { id: string; phase: string; chars: number }[];
}

const stateName = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${k}.${stateName(v)}`)
        .join(',');

/** What a session holds, as the adapter's `sessions()` shows it. */
export function viewOf(session: string, cell: SessionCell): SessionView {
  const context = contextOf(cell);
  return {
    session,
    state: stateName(stateValueOf(cell)),
    queue: context.queue.map((q) => ({ id: q.id, acceptedAt: q.acceptedAt, chars: q.text.length })),
    inFlight: context.inFlight.reduce((n, b) => n + b.items.length, 0),
    holds: context.holds.map((h) => ({ requestId: h.requestId, hold: h.hold })),
    inputs: context.inputs.map((i) => ({ id: i.id, phase: i.phase, chars: i.text.length })),
  };
}
