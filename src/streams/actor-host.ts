// Holds one session actor per session, feeds it inputs, and alone turns its outputs into AEP
// envelopes: each session's (epoch, seq) lives here and a SessionEmitter built from it stamps
// each step (AEP-0001 §7).
// Every command's ack is recorded as its exact serialisation so a retry gets it back byte for
// byte (AEP-0004 §3, D4). Muted stepping (replay) advances actors and touches nothing else.
// The session machine is pure, so an unobserved session is kept as its state value and context
// and stepped through the machine's own transition() (its fold, machines/fold.ts, when the log is
// replayed); it becomes a live actor only under inspection.
import { createActor, type Actor, type InspectionEvent, type Observer, type SnapshotFrom } from 'xstate';
import {
  SessionEmitter,
  SteeringError,
  agentEvent,
  eventText,
  newId,
  scopeOf,
  withdrawType,
  type AepCommand,
  type AepEvent,
  type EventFields,
  type Rejection,
  CODE_ATTR,
  RESUME_WINDOW_ATTR,
  describedType,
} from '../protocol/index.js';
import { redactText, redactValue } from '../protocol/redact.js';
import { sessionFold, sessionMachine } from '../machines/session.js';
import { decideUnknownSession } from '../machines/gate.js';
import { decisionsFrom } from '../machines/decisions.js';
import { repliesNeutral } from '../machines/session-parts.js';
import type { AckDecision, SessionContext, SessionInput, SessionOutput } from '../machines/session-types.js';
import type { ClassifiedHook, HookReply, SessionAbout, VendorSurface } from './surface.js';
import type { LogRecord } from './log.js';

export const DEFAULT_ATTENTION_TIMEOUT_MS = 55_000; // D14

/** Observation types that belong to a run and so carry an adapter-minted run id. */
const RUN_SCOPED = /^(run|tool|delegation)\./;

/** Something for one session, in arrival order. */
export type SessionItem =
  | { kind: 'hook'; session: string; hookId: string; at: number; hook: ClassifiedHook }
  | { kind: 'command'; session: string; at: number; command: AepCommand }
  | { kind: 'input'; session: string; input: SessionInput };

/** What the outside must do after a step. */
export type Effect =
  /** Write this reply to the waiting hook; `confirm` feeds back reply.written / reply.failed (D9). */
  | { kind: 'reply'; session?: string; hookId: string; reply: HookReply; confirm: boolean }
  /** The hook's reply waits for a decision; arm the D14 timer. */
  | { kind: 'hold'; session: string; hookId: string; requestId: string; timeoutMs: number }
  /** Hand an accepted send_input to the vendor's transport; its answer feeds input.sent / input.failed. */
  | { kind: 'send'; session: string; commandId: string; text: string; delivery?: string }
  /** Ask the transport to abort the active run; its answer feeds cancel.answered. */
  | { kind: 'cancel'; session: string; commandId: string }
  /** Answer a request the vendor raised on its channel (approve / deny, with the operator's words). */
  | { kind: 'answer'; session: string; approvalId: string; approved: boolean; reason?: string }
  /** Carry a command out on the vendor's API; its answer feeds forward.settled. */
  | { kind: 'forward'; session: string; command: AepCommand };

export interface StepResult {
  /** Events for the sinks, in order (re-acks included). */
  events: AepEvent[];
  /** Step number: `durable(n)` keeps it, `rollback()` undoes it until then (D22). */
  stepNo?: number;
  /** Records for the event log, written before any effect is performed (D12). */
  records: LogRecord[];
  effects: Effect[];
}

export interface HostOptions {
  surface: VendorSurface;
  /** AEP_INSTRUCT (D5). */
  instruct: boolean;
  /** The vendor's send_input gate (e.g. AEP_CLINE_HUB_CONTROL); off when absent. */
  sendInput?: boolean;
  /** Whether the send_input transport is connected right now. */
  inputReady?: () => boolean;
  /** The vendor's control gate for the surface's `controls` (e.g. AEP_OPENHANDS_CONTROL). */
  control?: boolean;
  /** The vendor's guard for a forwarded command, from what the stream last showed. */
  controlCheck?: (session: string, command: AepCommand) => Rejection | undefined;
  attentionTimeoutMs?: number;
  /** D25 resume window (`AEP_RESUME_WINDOW_MS`); the surface's otherwise. */
  resumeWindowMs?: number;
  /** D27: a delivering reply also tells the user, where the vendor has a field for it (default true; `--quiet` off). */
  notice?: boolean;
  /** Host segment of event sources; the machine's hostname otherwise. */
  host?: string;
  inspect?: Observer<InspectionEvent> | ((e: InspectionEvent) => void);
  onError?: (e: SteeringError) => void;
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

type SessionActor = Actor<typeof sessionMachine>;

/** What one step changed, so a step whose records never became durable can be undone (D22). */
interface Undo {
  stepNo: number;
  session: string;
  /** The cell before the step; undefined when the step spawned it. */
  cell: { value: SessionSnapshot['value']; context: SessionContext } | undefined;
  seq: number | undefined;
  orphan: Record<string, AckDecision> | undefined;
  /** Ack keys the step recorded, with what they held before. */
  acks: [string, string | undefined][];
  hookId: string | undefined;
}

/** A session cell as a snapshot holds it: the machine's persisted snapshot (D24). */
export interface PersistedCell {
  session: string;
  snapshot: { value: unknown; context: SessionContext; status?: string };
}

/** Everything a host holds beyond its log, for a snapshot (D24). */
export interface HostState {
  cells: PersistedCell[];
  /** The epoch each session's next process starts at (D11). */
  epochs: [string, number][];
  /** Recorded acks, byte for byte (D4). */
  acks: [string, string][];
  orphans: [string, Record<string, AckDecision>][];
}
type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;
type SessionScope = Parameters<typeof sessionMachine.transition>[2];

/**
 * One session: its state value and context, or, under inspection, a live actor so the inspector
 * sees every event and transition. An actor and its system cost ~4 KB each; a session kept as
 * data costs about what its context does, which matters with many idle sessions.
 */
type SessionCell =
  | { actor?: undefined; value: SessionSnapshot['value']; context: SessionContext }
  | { actor: SessionActor };

const stateValueOf = (cell: SessionCell): SessionSnapshot['value'] =>
  cell.actor ? cell.actor.getSnapshot().value : cell.value;
const contextOf = (cell: SessionCell): SessionContext => (cell.actor ? cell.actor.getSnapshot().context : cell.context);

const stateName = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${k}.${stateName(v)}`)
        .join(',');

const EMPTY: StepResult = { events: [], records: [], effects: [] };
/** Bound on kept emitters: the sessions active at once, not every session the host holds. */
const WARM_EMITTERS = 256;

/** Inputs that bring a session's cell into being (the hook moments, see apply()). */
const SPAWNS = new Set<string>(['hook.moment', 'hook.held', 'hook.end']);

/** D37: a title is the first non-blank line of the first prompt, at most 120 characters. */
function titleOf(prompt: string | undefined): string | undefined {
  const line = prompt
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? undefined : line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/**
 * D35: a request says what it asks. It goes out at capture `redacted`: the vendor's prompt with
 * what the tool will do, and the real option and field labels, each through the AEP-0003 §9.4
 * pipeline. A hop to a metadata ceiling synthesises the prompt from kind and subject (the tool
 * name) and turns labels into ids (protocol/capture.ts downLevel), so a watcher sees `Bash` only.
 */
function requestedFields(o: Extract<SessionOutput, { type: 'attention.requested' }>): EventFields {
  const r = o.request;
  const prompt = redactText(r.detail === undefined ? r.prompt : `${r.prompt}: ${r.detail}`);
  const data: Record<string, unknown> = { kind: r.kind, prompt, respond_via: r.respondVia ?? ['control'] };
  if (r.kind === 'permission') {
    data.options = (
      r.options ?? [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ]
    ).map((x) => ({ id: x.id, label: redactText(x.label) }));
  }
  if (r.fields) data.fields = redactValue(r.fields);
  const f: EventFields = { type: 'attention.requested', id: o.id, severity: 'notice', capture: 'redacted', data };
  if (r.subject !== undefined) f.subject = r.subject;
  if (o.cause !== undefined) f.cause = o.cause;
  return f;
}

export class ActorHost {
  readonly surface: VendorSurface;
  private readonly opts: HostOptions;
  private readonly sessions = new Map<string, SessionCell>();
  /** Next seq per session (AEP-0001 §7): two numbers kept, an emitter built per step. */
  private readonly seqs = new Map<string, number>();
  /** Emitters of the step in progress. */
  private readonly emitters = new Map<string, SessionEmitter>();
  /** Emitters of recently stepped sessions, so a busy session does not rebuild (and re-check) its emitter per step. */
  private readonly warm = new Map<string, SessionEmitter>();
  /** Epoch each session's emitter starts at (set by replay: previous max + 1, D11). */
  private readonly epochs = new Map<string, number>();
  /** Command dedupe key → its ack, exactly as first serialised. */
  private readonly recorded = new Map<string, string>();
  /** Decisions for commands to sessions that had no actor yet (D6), per session. */
  private readonly orphanDecisions = new Map<string, Record<string, AckDecision>>();
  /** Hooks whose reply is still owed, with what the vendor sent. */
  private readonly openHooks = new Map<string, ClassifiedHook>();
  /** D37: what this process has described of each session (session.described). */
  private readonly described = new Map<string, { cwd?: string; titled: boolean }>();
  private collecting: SessionOutput[] | undefined;
  private pureScope: SessionScope | undefined;
  /** Undo entries of steps whose records are not durable yet, oldest first (D22). */
  private undos: Undo[] = [];
  private stepCount = 0;
  private current: Undo | undefined;

  constructor(opts: HostOptions) {
    this.opts = opts;
    this.surface = opts.surface;
  }

  get vendor(): string {
    return this.surface.token;
  }

  get attentionTimeoutMs(): number {
    return this.opts.attentionTimeoutMs ?? this.surface.attentionTimeoutMs ?? DEFAULT_ATTENTION_TIMEOUT_MS;
  }

  sessionKeys(): string[] {
    return [...this.sessions.keys()];
  }

  context(session: string): SessionContext | undefined {
    const cell = this.sessions.get(session);
    return cell && contextOf(cell);
  }

  /** D7–D8: this hook is a moment that will get the neutral reply, whatever else its step does. */
  answersNeutrally(item: Extract<SessionItem, { kind: 'hook' }>): boolean {
    const c = item.hook.class;
    if (c.kind !== 'moment') return false;
    const cell = this.sessions.get(item.session);
    const turn = c.turn ?? item.hook.bounds;
    return repliesNeutral(
      cell && { value: stateValueOf(cell), context: contextOf(cell) },
      turn === undefined ? c : { ...c, turn },
    );
  }

  /** True once the session passed its end moment (and no start moment reopened it). */
  isEnded(session: string): boolean {
    return this.stateValue(session) === 'ended';
  }

  stateValue(session: string): unknown {
    const cell = this.sessions.get(session);
    return cell && stateValueOf(cell);
  }

  views(): SessionView[] {
    return [...this.sessions.entries()].map(([session, cell]) => {
      const context = contextOf(cell);
      return {
        session,
        state: stateName(stateValueOf(cell)),
        queue: context.queue.map((q) => ({ id: q.id, acceptedAt: q.acceptedAt, chars: q.text.length })),
        inFlight: context.inFlight.reduce((n, b) => n + b.items.length, 0),
        holds: context.holds.map((h) => ({ requestId: h.requestId, hold: h.hold })),
        inputs: context.inputs.map((i) => ({ id: i.id, phase: i.phase, chars: i.text.length })),
      };
    });
  }

  /** The recorded ack for a command key (byte-identical re-ack, D4). */
  recordedAck(key: string): string | undefined {
    return this.recorded.get(key);
  }

  // ---- durability (D22) -------------------------------------------------------------------

  /** Steps up to `stepNo` are durable: they can no longer be undone. */
  durable(stepNo: number): void {
    let i = 0;
    while (i < this.undos.length && this.undos[i]!.stepNo <= stepNo) i += 1;
    if (i > 0) this.undos.splice(0, i);
  }

  /** Undoes every step that is not durable, newest first: the sessions are as if they had not run. */
  rollback(): number {
    const undone = this.undos.length;
    for (let i = this.undos.length - 1; i >= 0; i -= 1) this.undoOne(this.undos[i]!);
    this.undos = [];
    return undone;
  }

  private undoOne(u: Undo): void {
    const now = this.sessions.get(u.session);
    now?.actor?.stop();
    if (u.cell === undefined) this.sessions.delete(u.session);
    else if (now?.actor) this.sessions.set(u.session, this.revive(u.session, u.cell));
    else this.sessions.set(u.session, { value: u.cell.value, context: u.cell.context });
    if (u.seq === undefined) this.seqs.delete(u.session);
    else this.seqs.set(u.session, u.seq);
    if (u.orphan === undefined) this.orphanDecisions.delete(u.session);
    else this.orphanDecisions.set(u.session, u.orphan);
    for (let i = u.acks.length - 1; i >= 0; i -= 1) {
      const [key, before] = u.acks[i]!;
      if (before === undefined) this.recorded.delete(key);
      else this.recorded.set(key, before);
    }
    if (u.hookId !== undefined) this.openHooks.delete(u.hookId);
  }

  /** A live actor (inspection) from a value and context. */
  private revive(session: string, s: { value: unknown; context: SessionContext }): SessionCell {
    const persisted = sessionMachine.getPersistedSnapshot(
      sessionMachine.resolveState({ value: s.value as SessionSnapshot['value'], context: s.context }),
    );
    const actor = createActor(sessionMachine, {
      input: { session, vendor: this.vendor },
      snapshot: persisted,
      ...(this.opts.inspect ? { inspect: this.opts.inspect } : {}),
    });
    actor.on('*', (o) => this.collecting?.push(o));
    actor.start();
    return { actor };
  }

  // ---- snapshots (D24) -----------------------------------------------------------------------

  /** The whole host as data: each cell's persisted snapshot, next epochs, recorded acks, orphan decisions. */
  exportState(): HostState {
    const cells: PersistedCell[] = [];
    const epochs: [string, number][] = [];
    for (const [session, cell] of this.sessions) {
      const persisted = cell.actor
        ? cell.actor.getPersistedSnapshot()
        : sessionMachine.getPersistedSnapshot(
            sessionMachine.resolveState({ value: cell.value, context: cell.context }),
          );
      const p = persisted as unknown as { value: unknown; context: SessionContext; status?: string };
      cells.push({
        session,
        snapshot: { value: p.value, context: p.context, ...(p.status ? { status: p.status } : {}) },
      });
    }
    // A session with no cell may still have emitted (a refused orphan command, D6): its positions count too.
    const known = new Set([...this.sessions.keys(), ...this.epochs.keys(), ...this.seqs.keys()]);
    for (const session of known) {
      const epoch = this.epochs.get(session) ?? 0;
      // A session that emitted in this process used `epoch`; the next process takes the one after it.
      epochs.push([session, (this.seqs.get(session) ?? 0) > 0 ? epoch + 1 : epoch]);
    }
    return { cells, epochs, acks: [...this.recorded.entries()], orphans: [...this.orphanDecisions.entries()] };
  }

  /** Restores a host exported by `exportState` (before any replay of the log's tail). */
  importState(s: HostState): void {
    for (const c of s.cells) {
      const cell: SessionCell = this.opts.inspect
        ? this.revive(c.session, c.snapshot)
        : { value: c.snapshot.value as SessionSnapshot['value'], context: c.snapshot.context };
      this.sessions.set(c.session, cell);
    }
    for (const [session, epoch] of s.epochs) this.epochs.set(session, epoch);
    for (const [key, bytes] of s.acks) this.recorded.set(key, bytes);
    for (const [session, d] of s.orphans) this.orphanDecisions.set(session, d);
  }

  // ---- replay support ---------------------------------------------------------------------

  /**
   * Restores a recorded ack and the epoch memory from a logged event (D11). `bytes` is the
   * event's text as logged, when the reader has it (the same bytes JSON.stringify gives back).
   */
  restoreEvent(e: AepEvent, ack: string | undefined, bytes?: string): void {
    if (ack !== undefined) this.recorded.set(ack, bytes ?? JSON.stringify(e));
    if (e.session !== undefined && e.seq !== undefined) {
      const next = (e.epoch ?? 0) + 1;
      if ((this.epochs.get(e.session) ?? 0) < next) this.epochs.set(e.session, next);
    }
  }

  /**
   * Feeds one logged input to its session with every sink muted. A session kept as data folds
   * it through the machine's definition (machines/fold.ts: XState's result without its
   * interpreter, ~10x faster); a new session, an orphan command and a live actor (inspection)
   * take the live path.
   */
  replayInput(session: string, input: SessionInput): void {
    const fold = typeof sessionFold === 'string' || this.opts.inspect ? undefined : sessionFold;
    let cell = this.sessions.get(session);
    if (fold && cell === undefined && SPAWNS.has(input.type)) {
      // A hook spawns its session as on the live path (spawn()), its initial state folded too.
      const decisions = this.orphanDecisions.get(session);
      this.orphanDecisions.delete(session);
      const initial = fold.initial({ session, vendor: this.vendor, ...(decisions ? { decisions } : {}) });
      cell = { value: initial.value as SessionSnapshot['value'], context: initial.context };
      this.sessions.set(session, cell);
    }
    if (!fold || cell === undefined || cell.actor) {
      this.apply(session, input);
      return;
    }
    fold.step(cell, input);
  }

  /** D12 after replay: in-flight instructions and orphaned holds are reported in the new epoch. */
  recover(at: number): StepResult[] {
    const out: StepResult[] = [];
    for (const session of this.sessions.keys()) {
      const ctx = this.context(session);
      const owed =
        ctx !== undefined &&
        (ctx.inFlight.length > 0 ||
          ctx.holds.length > 0 ||
          ctx.inputs.some((i) => i.phase === 'sending') ||
          ctx.cancel?.acked === false ||
          ctx.forwards.length > 0);
      if (!owed) continue;
      out.push(this.step({ kind: 'input', session, input: { type: 'restart.recovered', at } }));
    }
    return out;
  }

  // ---- live stepping ----------------------------------------------------------------------

  /** Turns an item into the session input, steps the actor, and stamps what it announced. */
  step(item: SessionItem): StepResult {
    const cell = this.sessions.get(item.session);
    const undo: Undo = {
      stepNo: ++this.stepCount,
      session: item.session,
      cell: cell && { value: stateValueOf(cell), context: contextOf(cell) },
      seq: this.seqs.get(item.session),
      orphan: this.orphanDecisions.get(item.session),
      acks: [],
      hookId: item.kind === 'hook' ? item.hookId : undefined,
    };
    this.current = undo;
    try {
      return { ...this.stepFailOpen(item), stepNo: undo.stepNo };
    } finally {
      this.current = undefined;
      this.undos.push(undo);
      for (const [session, e] of this.emitters) {
        if (e.position.seq !== (this.seqs.get(session) ?? 0)) this.seqs.set(session, e.position.seq);
        if (this.warm.size >= WARM_EMITTERS) this.warm.clear();
        this.warm.set(session, e);
      }
      this.emitters.clear();
    }
  }

  private stepFailOpen(item: SessionItem): StepResult {
    try {
      return this.stepUnsafe(item);
    } catch (cause) {
      const err =
        cause instanceof SteeringError
          ? cause
          : new SteeringError('EVENT_INVALID', `session step failed: ${String(cause)}`, { cause });
      this.opts.onError?.(err);
      if (item.kind !== 'hook') return EMPTY;
      // Fail open (D15): the waiting hook gets the neutral reply, and anything the step had
      // already handed to that reply goes back to the head of the queue (D9).
      this.openHooks.delete(item.hookId);
      const neutral: Effect = {
        kind: 'reply',
        session: item.session,
        hookId: item.hookId,
        reply: this.surface.neutralReply(item.hook),
        confirm: false,
      };
      try {
        const undo = this.stepUnsafe({
          kind: 'input',
          session: item.session,
          input: { type: 'reply.failed', at: item.at, hookId: item.hookId },
        });
        return { events: undo.events, records: undo.records, effects: [...undo.effects, neutral] };
      } catch (again) {
        this.opts.onError?.(
          new SteeringError('EVENT_INVALID', `could not return a failed reply's instructions: ${String(again)}`, {
            cause: again,
          }),
        );
        return { ...EMPTY, effects: [neutral] };
      }
    }
  }

  private stepUnsafe(item: SessionItem): StepResult {
    const events: AepEvent[] = [];
    const records: LogRecord[] = [];
    let input: SessionInput;
    // D37: an invocation that fires nothing but its end moment (`claude mcp list`) is not a
    // session: nothing is emitted, claimed or logged for it, and the hook gets the neutral reply.
    if (item.kind === 'hook' && item.hook.class.kind === 'end' && !this.sessions.has(item.session)) {
      const reply = this.surface.neutralReply(item.hook);
      return {
        events,
        records,
        effects: [{ kind: 'reply', session: item.session, hookId: item.hookId, reply, confirm: false }],
      };
    }
    if (item.kind === 'hook') {
      const emitter = this.emitterFor(item.session);
      let firstId: string | undefined;
      // A vendor that names no run but marks its turns gets adapter-minted run ids: the opening
      // moment mints one, and run, tool and delegation events carry it until the turn closes.
      const cls = item.hook.class;
      const runId =
        cls.kind === 'moment' && cls.turn === 'opens' ? `run_${newId(item.at)}` : this.context(item.session)?.run;
      for (const o of item.hook.observations) {
        // A malformed observation is reported and skipped; steering for this hook goes on.
        try {
          const f: EventFields = { type: o.type, at: item.at, id: o.id ?? newId(item.at) };
          if (o.data !== undefined) f.data = o.data;
          if (o.subject !== undefined) f.subject = o.subject;
          if (o.severity !== undefined) f.severity = o.severity;
          if (o.capture !== undefined) f.capture = o.capture;
          const scope = scopeOf(o.type);
          // Agent-scoped observations carry no session, run or seq (AEP-0001 §5.2).
          if (scope === 'agent') {
            const e = agentEvent(this.vendor, f, this.opts.host);
            events.push(e);
            records.push({ k: 'ev', e });
            continue;
          }
          if (scope !== 'session') {
            this.opts.onError?.(
              new SteeringError('EVENT_INVALID', `observation type ${o.type} is a command type; not emitted`),
            );
            continue;
          }
          if (o.run !== undefined) f.run = o.run;
          else if (runId !== undefined && RUN_SCOPED.test(o.type)) f.run = runId;
          if (o.step !== undefined) f.step = o.step;
          if (o.cause !== undefined) f.cause = o.cause;
          // The vendor's abort moment answers a cancel under way: its run.cancelled names the command.
          const cancel = o.type === 'run.cancelled' ? this.context(item.session)?.cancel : undefined;
          if (cancel?.acked === true) {
            f.cause = cancel.id;
            f.data = { ...(f.data ?? {}), by: 'control' };
          }
          const e = emitter.emit(f);
          firstId ??= e.id;
          events.push(e);
          records.push({ k: 'ev', e });
        } catch (cause) {
          this.opts.onError?.(
            cause instanceof SteeringError
              ? cause
              : new SteeringError('EVENT_INVALID', `observation ${o.type} not emitted: ${String(cause)}`, { cause }),
          );
        }
      }
      const described = this.description(item.session, item.hook.about);
      if (described !== undefined) {
        const e = emitter.emit({ ...described, at: item.at, id: newId(item.at) });
        events.push(e);
        records.push({ k: 'ev', e });
      }
      input = this.hookInput(item, firstId, cls.kind === 'moment' && cls.turn === 'opens' ? runId : undefined);
      this.openHooks.set(item.hookId, item.hook);
    } else if (item.kind === 'command') {
      input = this.commandInput(item);
    } else {
      input = item.input;
    }
    const before = this.context(item.session);
    const outputs = this.apply(item.session, input);
    // Hooks and commands are always kept (audit); a timer or write result only when it changed
    // something, so idle ticks do not grow the log.
    const changed = outputs.length > 0 || this.context(item.session) !== before;
    if (item.kind !== 'input' || changed) records.push({ k: 'in', s: item.session, i: input });
    return this.stamp(item.session, input, outputs, events, records);
  }

  /**
   * D37: `x.{vendor}.session.described` when a session is first seen by this process, when its
   * working directory changes, and once with its title (the first prompt's first line; the
   * event is then at capture redacted, so a metadata watcher never gets the title).
   */
  private description(session: string, about: SessionAbout | undefined): EventFields | undefined {
    const known = this.described.get(session);
    const cwd = about?.cwd ?? known?.cwd;
    const title = known?.titled === true ? undefined : titleOf(about?.prompt);
    if (known !== undefined && cwd === known.cwd && title === undefined) return undefined;
    // Only what the hook input said: a bridge vendor (no `about`) is described by its own events.
    if (cwd === undefined && title === undefined) return undefined;
    this.described.set(session, {
      ...(cwd === undefined ? {} : { cwd }),
      titled: known?.titled === true || title !== undefined,
    });
    const data: Record<string, unknown> = {};
    if (cwd !== undefined) data.cwd = cwd;
    if (title !== undefined) data.title = title;
    if (this.surface.staleAfterMs !== undefined) data.stale_after_ms = this.surface.staleAfterMs;
    return { type: describedType(this.vendor), data, capture: title === undefined ? 'metadata' : 'redacted' };
  }

  private hookInput(
    item: Extract<SessionItem, { kind: 'hook' }>,
    causeId: string | undefined,
    runId?: string,
  ): SessionInput {
    const base = { at: item.at, hookId: item.hookId, ...(causeId === undefined ? {} : { causeId }) };
    const c = item.hook.class;
    if (c.kind === 'end') {
      const windowMs = this.opts.resumeWindowMs ?? this.surface.resumeWindowMs ?? 0;
      return { type: 'hook.end', ...base, reason: c.reason, ...(windowMs > 0 ? { windowMs } : {}) };
    }
    if (c.kind === 'held') {
      return {
        type: 'hook.held',
        ...base,
        requestId: newId(item.at),
        hold: c.hold,
        request: c.request,
        timeoutMs: this.attentionTimeoutMs,
        ...(c.call === undefined ? {} : { call: c.call }),
      };
    }
    const turn = c.turn ?? item.hook.bounds;
    // D34: only a moment that reports a call some request of this session holds mints an answer id.
    const ran =
      c.ran !== undefined && this.context(item.session)?.holds.some((h) => h.call === c.ran) === true
        ? { ran: { call: c.ran, answeredId: newId(item.at) } }
        : {};
    return {
      type: 'hook.moment',
      ...base,
      eligible: c.eligible,
      moment: item.hook.event,
      ...(c.starts === true ? { starts: true } : {}),
      ...(turn === undefined ? {} : { turn }),
      ...(runId === undefined ? {} : { runId }),
      ...ran,
    };
  }

  private commandInput(item: Extract<SessionItem, { kind: 'command' }>): SessionInput {
    const c = item.command;
    if (this.surface.controls?.includes(c.type) === true) {
      const gateOpen = this.opts.control === true;
      const refusal = gateOpen ? this.opts.controlCheck?.(item.session, c) : undefined;
      return {
        type: 'command.forward',
        at: item.at,
        command: c,
        gateOpen,
        ...(refusal === undefined ? {} : { refusal }),
      };
    }
    if (c.type === 'control.attention.respond')
      return { type: 'command.respond', at: item.at, command: c, answeredId: newId(item.at) };
    if (c.type === 'control.cancel' && this.surface.cancels === true) {
      return {
        type: 'command.cancel',
        at: item.at,
        command: c,
        gateOpen: this.opts.sendInput === true,
        ready: this.opts.inputReady?.() ?? false,
      };
    }
    const input = this.surface.sendInput;
    if (input !== undefined && c.type === input.type) {
      return {
        type: 'command.send_input',
        at: item.at,
        command: c,
        gateOpen: this.opts.sendInput === true,
        ready: this.opts.inputReady?.() ?? false,
        policy: input.policy,
      };
    }
    // Any other command reaching a session is the steering verb or one this adapter does not
    // take; the gate answers both (D5: only the surface's verb can pass).
    if (c.type === withdrawType(this.surface.token))
      return { type: 'command.withdraw', at: item.at, command: c, gateOpen: this.opts.instruct };
    return {
      type: 'command.instruct',
      at: item.at,
      command: c,
      gateOpen: this.opts.instruct && c.type === this.surface.steeringType,
      ...(this.surface.deliveries === undefined ? {} : { deliveries: this.surface.deliveries }),
    };
  }

  /** Steps the session (spawning it for a hook) and returns what it announced. */
  private apply(session: string, input: SessionInput): SessionOutput[] {
    let cell = this.sessions.get(session);
    if (!cell) {
      if (
        input.type === 'command.instruct' ||
        input.type === 'command.withdraw' ||
        input.type === 'command.respond' ||
        input.type === 'command.send_input' ||
        input.type === 'command.forward' ||
        input.type === 'command.cancel'
      ) {
        return this.orphanCommand(session, input);
      }
      if (input.type !== 'hook.moment' && input.type !== 'hook.held' && input.type !== 'hook.end') return [];
      cell = this.spawn(session);
    }
    const outputs: SessionOutput[] = [];
    this.collecting = outputs;
    try {
      if (cell.actor) {
        cell.actor.send(input);
      } else if (typeof sessionFold !== 'string') {
        // The machine's own definition folded (machines/fold.ts), which reaches what transition()
        // reaches, outputs in order (test/machines/fold.test.ts), without building an XState
        // snapshot per step. The cell changes only once the whole step succeeded.
        const next = { value: cell.value, context: cell.context };
        sessionFold.step(next, input, outputs);
        cell.value = next.value as SessionSnapshot['value'];
        cell.context = next.context;
      } else {
        // The same microsteps an actor runs; the cell changes only once the whole step succeeded.
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

  private spawn(session: string): SessionCell {
    const decisions = this.orphanDecisions.get(session);
    this.orphanDecisions.delete(session);
    const input = { session, vendor: this.vendor, ...(decisions ? { decisions } : {}) };
    let cell: SessionCell;
    if (this.opts.inspect) {
      const actor = createActor(sessionMachine, { input, inspect: this.opts.inspect });
      actor.on('*', (o) => this.collecting?.push(o));
      actor.start();
      cell = { actor };
    } else {
      const initial = sessionMachine.getInitialSnapshot(this.scope(), input);
      cell = { value: initial.value, context: initial.context };
    }
    this.sessions.set(session, cell);
    return cell;
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
              'EVENT_INVALID',
              `session machine action ${a.type} has an effect; only emits are expected`,
            );
          this.collecting?.push((a.params as { event: SessionOutput }).event);
        },
      };
    }
    return this.pureScope;
  }

  /** D6: a command for a session with no actor is refused, once, and remembered. */
  private orphanCommand(session: string, input: SessionInput & { command: AepCommand }): SessionOutput[] {
    const decisions = this.orphanDecisions.get(session) ?? {};
    const d = decideUnknownSession(decisionsFrom(decisions), input.command);
    if (d.kind === 'duplicate') return [{ type: 'control.reack', cause: input.command.id, key: d.key }];
    if (d.kind !== 'reject') return [];
    this.orphanDecisions.set(session, { ...decisions, [d.key]: 'rejected' });
    return [{ type: 'control.rejected', cause: input.command.id, key: d.key, rejection: d.rejection }];
  }

  private emitterFor(session: string): SessionEmitter {
    let e = this.emitters.get(session);
    if (!e) {
      // A recently used emitter serves again only where the host's position agrees with it (a
      // rollback or a new epoch moves the position; the emitter is then built afresh).
      const w = this.warm.get(session);
      const p = w?.position;
      if (w && p!.seq === (this.seqs.get(session) ?? 0) && w.epoch === (this.epochs.get(session) ?? 0)) {
        this.emitters.set(session, w);
        return w;
      }
    }
    if (!e) {
      e = new SessionEmitter({
        agent: this.vendor,
        session,
        epoch: this.epochs.get(session) ?? 0,
        startSeq: this.seqs.get(session) ?? 0,
        ...(this.opts.host ? { host: this.opts.host } : {}),
      });
      this.emitters.set(session, e);
    }
    return e;
  }

  /** Appends what the outputs announce to `events` and `records` (the step's observations come first). */
  private stamp(
    session: string,
    input: SessionInput,
    outputs: readonly SessionOutput[],
    events: AepEvent[] = [],
    records: LogRecord[] = [],
  ): StepResult {
    const effects: Effect[] = [];
    const at = input.at;
    let emitter: SessionEmitter | undefined;
    // Every `f` below is a literal made for this one call, so it takes the step's time in place.
    const emit = (f: EventFields, ack?: string): void => {
      f.at = at;
      emitter ??= this.emitterFor(session);
      const e = emitter.emit(f);
      events.push(e);
      records.push(ack === undefined ? { k: 'ev', e } : { k: 'ev', e, ack });
      if (ack !== undefined) {
        this.current?.acks.push([ack, this.recorded.get(ack)]);
        this.recorded.set(ack, eventText(e));
      }
    };
    for (const o of outputs) {
      switch (o.type) {
        case 'control.accepted':
          emit({ type: 'control.accepted', cause: o.cause }, o.key);
          break;
        case 'control.rejected':
          // control.rejected.detail is redacted-class; the detail never carries instruction text (D2).
          // The rule's stable id rides beside AEP's coarse `reason` as the extension attribute
          // `code` (AEP-0001 §5.4, a scalar any capture level keeps; README "Errors").
          emit(
            {
              type: 'control.rejected',
              cause: o.cause,
              capture: 'redacted',
              extensions: { [CODE_ATTR]: o.rejection.rule },
              data: { reason: o.rejection.reason, detail: o.rejection.detail },
            },
            o.key,
          );
          break;
        case 'control.reack': {
          const bytes = this.recorded.get(o.key);
          if (bytes !== undefined) events.push(JSON.parse(bytes) as AepEvent);
          break;
        }
        case 'instruction.delivered':
          emit({
            type: o.eventType,
            cause: o.cause,
            data: {
              queued_ms: o.queuedMs,
              ...(o.moment === undefined ? {} : { moment: o.moment }),
              ...(o.delivery === undefined ? {} : { delivery: o.delivery }),
            },
          });
          break;
        case 'instruction.dropped':
          emit({
            type: o.eventType,
            cause: o.cause,
            data: { reason: o.reason },
            ...(o.subject === undefined ? {} : { subject: o.subject }),
          });
          break;
        case 'attention.requested':
          emit(requestedFields(o));
          break;
        case 'attention.answered': {
          const textual = o.answer.text !== undefined || o.answer.values !== undefined;
          emit({
            type: 'attention.answered',
            id: o.id,
            subject: o.subject,
            cause: o.cause,
            capture: textual ? 'redacted' : 'metadata',
            data: { answer: o.answer, via: o.via ?? 'control' },
          });
          break;
        }
        case 'attention.resolved':
          emit({
            type: 'attention.resolved',
            subject: o.subject,
            cause: o.cause,
            data: { resolution: o.resolution, latency_ms: o.latencyMs },
          });
          break;
        case 'attention.timeout':
          emit({ type: 'attention.timeout', subject: o.subject, cause: o.cause, data: { after_ms: o.afterMs } });
          break;
        case 'session.ended':
        case 'session.closed': {
          // D36: the resume window rides the end event as the extension attribute `resumewindowms`.
          const f: EventFields = {
            type: o.type === 'session.ended' ? o.type : o.eventType,
            data: { reason: o.reason },
          };
          if (o.cause !== undefined) f.cause = o.cause;
          if (o.resumeWindowMs !== undefined) f.extensions = { [RESUME_WINDOW_ATTR]: o.resumeWindowMs };
          emit(f);
          break;
        }
        case 'session.reopened':
          emit(o.cause === undefined ? { type: o.eventType } : { type: o.eventType, cause: o.cause });
          break;
        case 'run.cancelled':
          emit({
            type: 'run.cancelled',
            cause: o.cause,
            ...(o.run === undefined ? {} : { run: o.run }),
            data: { by: 'control' },
          });
          break;
        case 'approval.answer': {
          const approved = o.decision.option === 'approve' || o.decision.option === 'allow';
          effects.push({
            kind: 'answer',
            session,
            approvalId: o.approvalId,
            approved,
            ...(o.decision.message === undefined ? {} : { reason: o.decision.message }),
          });
          break;
        }
        case 'run.cancel':
          effects.push({ kind: 'cancel', session, commandId: o.cause });
          break;
        case 'control.forward':
          effects.push({ kind: 'forward', session, command: o.command });
          break;
        case 'input.send':
          effects.push({
            kind: 'send',
            session,
            commandId: o.cause,
            text: o.text,
            ...(o.delivery === undefined ? {} : { delivery: o.delivery }),
          });
          break;
        case 'input.sent':
          emit({ type: o.eventType, cause: o.cause, data: o.delivery === undefined ? {} : { delivery: o.delivery } });
          break;
        case 'input.consumed':
          emit({ type: o.eventType, cause: o.cause, data: { queued_ms: o.queuedMs } });
          break;
        case 'journal.inflight':
          records.push({ k: 'flight', s: session, hook: o.hookId, ids: o.ids });
          break;
        case 'reply.context': {
          const hook = this.takeHook(o.hookId);
          const notice = this.opts.notice === false ? undefined : { count: o.ids.length, from: o.from };
          effects.push({
            kind: 'reply',
            session,
            hookId: o.hookId,
            reply: this.surface.contextReply(hook, o.text, notice),
            confirm: true,
          });
          break;
        }
        case 'reply.neutral':
          effects.push({
            kind: 'reply',
            session,
            hookId: o.hookId,
            reply: this.surface.neutralReply(this.takeHook(o.hookId)),
            confirm: false,
          });
          break;
        case 'reply.hold':
          effects.push({ kind: 'hold', session, hookId: o.hookId, requestId: o.requestId, timeoutMs: o.timeoutMs });
          break;
        case 'reply.decision': {
          const hook = this.openHooks.get(o.hookId);
          this.openHooks.delete(o.hookId);
          if (hook)
            effects.push({
              kind: 'reply',
              session,
              hookId: o.hookId,
              reply: this.surface.decisionReply(hook, o.decision),
              confirm: false,
            });
          break;
        }
      }
    }
    return { events, records, effects };
  }

  private takeHook(hookId: string): ClassifiedHook {
    const hook = this.openHooks.get(hookId);
    this.openHooks.delete(hookId);
    if (!hook) throw new SteeringError('EVENT_INVALID', `no open hook ${hookId}`);
    return hook;
  }

  stop(): void {
    for (const cell of this.sessions.values()) cell.actor?.stop();
  }
}
