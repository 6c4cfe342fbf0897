// Holds every session the adapter serves, feeds each its inputs, and alone turns what it
// announces into AEP envelopes (stamp.ts): each session is one record (session-record.ts) with
// its cell, its (epoch, seq) and the emitter that stamps it (AEP-0001 §7). Every command's ack
// is recorded as its exact serialisation so a retry gets it back byte for byte (AEP-0004 §3,
// D4). Each step keeps an undo beside it until its records are durable (D22). Muted stepping
// (replay) advances sessions and touches nothing else.
import type { InspectionEvent, Observer } from 'xstate';
import {
  SessionEmitter,
  SteeringError,
  agentEvent,
  newId,
  scopeOf,
  withdrawType,
  type AepCommand,
  type AepEvent,
  type EventFields,
  type Rejection,
  describedType,
} from '../protocol/index.js';
import { decideUnknownSession } from '../machines/gate.js';
import { decisionsFrom } from '../machines/decisions.js';
import { repliesNeutral } from '../machines/session-parts.js';
import type { AckDecision, SessionContext, SessionInput, SessionOutput } from '../machines/session-types.js';
import type { ClassifiedHook, SessionAbout, VendorSurface } from './surface.js';
import type { LogRecord } from './log.js';
import {
  SessionStepper,
  cellState,
  contextOf,
  stateValueOf,
  type CellState,
  type SessionCell,
  type SessionRecord,
} from './session-record.js';
import { stamp } from './stamp.js';
import type { Effect, SessionItem, StepResult } from './step-types.js';

export const DEFAULT_ATTENTION_TIMEOUT_MS = 55_000; // D14

/** Observation types that belong to a run and so carry an adapter-minted run id. */
const RUN_SCOPED = /^(run|tool|delegation)\./;

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

/** What one step changed, so a step whose records never became durable can be undone (D22). */
interface Undo {
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

function titleOf(prompt: string | undefined): string | undefined {
  const line = prompt
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? undefined : line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

export class ActorHost {
  readonly surface: VendorSurface;
  private readonly opts: HostOptions;
  /** Every session, in the order their cells came into being. */
  private readonly records = new Map<string, SessionRecord>();
  /** Records whose emitter is kept warm, so a busy session does not rebuild (and re-check) it per step. */
  private readonly warm = new Set<SessionRecord>();
  /** Command dedupe key → its ack, exactly as first serialised. */
  private readonly recorded = new Map<string, string>();
  /** Hooks whose reply is still owed, with what the vendor sent. */
  private readonly openHooks = new Map<string, ClassifiedHook>();
  private readonly stepper: SessionStepper;
  /** Undo entries of steps whose records are not durable yet, oldest first (D22). */
  private undos: Undo[] = [];
  private stepCount = 0;
  /** Emitters of the step in progress, by the record they stamp for. */
  private readonly stepping = new Map<SessionRecord, SessionEmitter>();

  constructor(opts: HostOptions) {
    this.opts = opts;
    this.surface = opts.surface;
    this.stepper = new SessionStepper(opts.surface.token, opts.inspect);
  }

  get vendor(): string {
    return this.surface.token;
  }

  get attentionTimeoutMs(): number {
    return this.opts.attentionTimeoutMs ?? this.surface.attentionTimeoutMs ?? DEFAULT_ATTENTION_TIMEOUT_MS;
  }

  sessionKeys(): string[] {
    const keys: string[] = [];
    for (const r of this.records.values()) if (r.cell) keys.push(r.session);
    return keys;
  }

  context(session: string): SessionContext | undefined {
    const cell = this.records.get(session)?.cell;
    return cell && contextOf(cell);
  }

  /** D7–D8: this hook is a moment that will get the neutral reply, whatever else its step does. */
  answersNeutrally(item: Extract<SessionItem, { kind: 'hook' }>): boolean {
    const c = item.hook.class;
    if (c.kind !== 'moment') return false;
    const cell = this.records.get(item.session)?.cell;
    const turn = c.turn ?? item.hook.bounds;
    return repliesNeutral(cell && cellState(cell), turn === undefined ? c : { ...c, turn });
  }

  /** True once the session passed its end moment (and no start moment reopened it). */
  isEnded(session: string): boolean {
    return this.stateValue(session) === 'ended';
  }

  stateValue(session: string): unknown {
    const cell = this.records.get(session)?.cell;
    return cell && stateValueOf(cell);
  }

  views(): SessionView[] {
    const views: SessionView[] = [];
    for (const { session, cell } of this.records.values()) {
      if (!cell) continue;
      const context = contextOf(cell);
      views.push({
        session,
        state: stateName(stateValueOf(cell)),
        queue: context.queue.map((q) => ({ id: q.id, acceptedAt: q.acceptedAt, chars: q.text.length })),
        inFlight: context.inFlight.reduce((n, b) => n + b.items.length, 0),
        holds: context.holds.map((h) => ({ requestId: h.requestId, hold: h.hold })),
        inputs: context.inputs.map((i) => ({ id: i.id, phase: i.phase, chars: i.text.length })),
      });
    }
    return views;
  }

  /** The recorded ack for a command key (byte-identical re-ack, D4). */
  recordedAck(key: string): string | undefined {
    return this.recorded.get(key);
  }

  private record(session: string): SessionRecord {
    let r = this.records.get(session);
    if (!r) {
      r = { session };
      this.records.set(session, r);
    }
    return r;
  }

  /** Gives the record its first cell; it moves behind the sessions already live, as a new one would. */
  private setCell(r: SessionRecord, cell: SessionCell): SessionCell {
    if (!r.cell) {
      this.records.delete(r.session);
      this.records.set(r.session, r);
    }
    r.cell = cell;
    return cell;
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
    for (let i = u.acks.length - 1; i >= 0; i -= 1) {
      const [key, before] = u.acks[i]!;
      if (before === undefined) this.recorded.delete(key);
      else this.recorded.set(key, before);
    }
    if (u.hookId !== undefined) this.openHooks.delete(u.hookId);
    const r = this.records.get(u.session);
    if (!r) return;
    r.cell?.actor?.stop();
    if (!u.existed) {
      this.records.delete(u.session);
      this.warm.delete(r);
      return;
    }
    if (u.cell === undefined) delete r.cell;
    else r.cell = this.stepper.restore(r.session, u.cell);
    if (u.seq === undefined) delete r.seq;
    else r.seq = u.seq;
    if (u.orphan === undefined) delete r.orphan;
    else r.orphan = u.orphan;
  }

  // ---- snapshots (D24) -----------------------------------------------------------------------

  /** The whole host as data: each cell's persisted snapshot, next epochs, recorded acks, orphan decisions. */
  exportState(): HostState {
    const cells: PersistedCell[] = [];
    const epochs: [string, number][] = [];
    const orphans: [string, Record<string, AckDecision>][] = [];
    for (const { session, cell } of this.records.values()) {
      if (!cell) continue;
      const p = this.stepper.persisted(cell);
      cells.push({
        session,
        snapshot: { value: p.value, context: p.context, ...(p.status ? { status: p.status } : {}) },
      });
    }
    // A session with no cell may still have emitted (a refused orphan command, D6): its positions
    // count too, after the sessions with cells.
    const positioned = [...this.records.values()].filter((r) => r.cell || r.epoch !== undefined || r.seq !== undefined);
    for (const r of [...positioned.filter((r) => r.cell), ...positioned.filter((r) => !r.cell)]) {
      const epoch = r.epoch ?? 0;
      // A session that emitted in this process used `epoch`; the next process takes the one after it.
      epochs.push([r.session, (r.seq ?? 0) > 0 ? epoch + 1 : epoch]);
    }
    for (const r of this.records.values()) if (r.orphan !== undefined) orphans.push([r.session, r.orphan]);
    return { cells, epochs, acks: [...this.recorded.entries()], orphans };
  }

  /** Restores a host exported by `exportState` (before any replay of the log's tail). */
  importState(s: HostState): void {
    for (const c of s.cells) this.setCell(this.record(c.session), this.stepper.restore(c.session, c.snapshot));
    for (const [session, epoch] of s.epochs) this.record(session).epoch = epoch;
    for (const [key, bytes] of s.acks) this.recorded.set(key, bytes);
    for (const [session, d] of s.orphans) this.record(session).orphan = d;
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
      const r = this.record(e.session);
      if ((r.epoch ?? 0) < next) r.epoch = next;
    }
  }

  /**
   * Feeds one logged input to its session with every sink muted. A session kept as data folds
   * it through the machine's definition (machines/fold.ts: XState's result without its
   * interpreter, ~10x faster); a new session, an orphan command and a live actor (inspection)
   * take the live path.
   */
  replayInput(session: string, input: SessionInput): void {
    const r = this.records.get(session);
    let cell = r?.cell;
    if (cell === undefined && SPAWNS.has(input.type) && this.stepper.folds(cell)) {
      // A hook spawns its session as on the live path (spawn()), its initial state folded too.
      cell = this.spawn(session, true);
    }
    if (cell === undefined || !this.stepper.folds(cell)) {
      this.apply(session, input);
      return;
    }
    this.stepper.advance(cell, input, true);
  }

  /** D12 after replay: in-flight instructions and orphaned holds are reported in the new epoch. */
  recover(at: number): StepResult[] {
    const out: StepResult[] = [];
    for (const session of this.sessionKeys()) {
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

  /** Turns an item into the session input, steps the session, and stamps what it announced. */
  step(item: SessionItem): StepResult {
    const record = this.records.get(item.session);
    const undo: Undo = {
      stepNo: ++this.stepCount,
      session: item.session,
      existed: record !== undefined,
      cell: record?.cell && cellState(record.cell),
      seq: record?.seq,
      orphan: record?.orphan,
      acks: [],
      hookId: item.kind === 'hook' ? item.hookId : undefined,
    };
    try {
      return { ...this.stepFailOpen(item, undo), stepNo: undo.stepNo };
    } finally {
      this.undos.push(undo);
      for (const [r, e] of this.stepping) {
        if (e.position.seq !== (r.seq ?? 0)) r.seq = e.position.seq;
        if (this.warm.size >= WARM_EMITTERS && !this.warm.has(r)) {
          for (const w of this.warm) delete w.emitter;
          this.warm.clear();
        }
        r.emitter = e;
        this.warm.add(r);
      }
      this.stepping.clear();
    }
  }

  private stepFailOpen(item: SessionItem, undo: Undo): StepResult {
    try {
      return this.stepUnsafe(item, undo);
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
        const back = this.stepUnsafe(
          { kind: 'input', session: item.session, input: { type: 'reply.failed', at: item.at, hookId: item.hookId } },
          undo,
        );
        return { events: back.events, records: back.records, effects: [...back.effects, neutral] };
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

  private stepUnsafe(item: SessionItem, undo: Undo): StepResult {
    const events: AepEvent[] = [];
    const records: LogRecord[] = [];
    let input: SessionInput;
    // D37: an invocation that fires nothing but its end moment (`claude mcp list`) is not a
    // session: nothing is emitted, claimed or logged for it, and the hook gets the neutral reply.
    if (item.kind === 'hook' && item.hook.class.kind === 'end' && !this.records.get(item.session)?.cell) {
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
    const out = stamp(
      {
        session: item.session,
        emitter: () => this.emitterFor(item.session),
        ack: (key) => this.recorded.get(key),
        hook: (hookId) => this.openHooks.get(hookId),
      },
      input,
      outputs,
      {
        contextReply: this.surface.contextReply.bind(this.surface),
        neutralReply: this.surface.neutralReply.bind(this.surface),
        decisionReply: this.surface.decisionReply.bind(this.surface),
        notice: this.opts.notice !== false,
      },
      events,
      records,
    );
    for (const [key, text] of out.acks) {
      undo.acks.push([key, this.recorded.get(key)]);
      this.recorded.set(key, text);
    }
    for (const hookId of out.answered) this.openHooks.delete(hookId);
    return { events: out.events, records: out.records, effects: out.effects };
  }

  /**
   * D37: `x.{vendor}.session.described` when a session is first seen by this process, when its
   * working directory changes, and once with its title (the first prompt's first line; the
   * event is then at capture redacted, so a metadata watcher never gets the title).
   */
  private description(session: string, about: SessionAbout | undefined): EventFields | undefined {
    const known = this.records.get(session)?.described;
    const cwd = about?.cwd ?? known?.cwd;
    const title = known?.titled === true ? undefined : titleOf(about?.prompt);
    if (known !== undefined && cwd === known.cwd && title === undefined) return undefined;
    // Only what the hook input said: a bridge vendor (no `about`) is described by its own events.
    if (cwd === undefined && title === undefined) return undefined;
    this.record(session).described = {
      ...(cwd === undefined ? {} : { cwd }),
      titled: known?.titled === true || title !== undefined,
    };
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
    let cell = this.records.get(session)?.cell;
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
      if (!SPAWNS.has(input.type)) return [];
      cell = this.spawn(session, false);
    }
    return this.stepper.advance(cell, input);
  }

  /** A session's first cell, with the decisions taken for it before it had one (D6). */
  private spawn(session: string, muted: boolean): SessionCell {
    const r = this.record(session);
    const decisions = r.orphan;
    delete r.orphan;
    return this.setCell(r, this.stepper.spawn(session, decisions, muted));
  }

  /** D6: a command for a session with no cell is refused, once, and remembered. */
  private orphanCommand(session: string, input: SessionInput & { command: AepCommand }): SessionOutput[] {
    const decisions = this.records.get(session)?.orphan ?? {};
    const d = decideUnknownSession(decisionsFrom(decisions), input.command);
    if (d.kind === 'duplicate') return [{ type: 'control.reack', cause: input.command.id, key: d.key }];
    if (d.kind !== 'reject') return [];
    this.record(session).orphan = { ...decisions, [d.key]: 'rejected' };
    return [{ type: 'control.rejected', cause: input.command.id, key: d.key, rejection: d.rejection }];
  }

  /**
   * The emitter for the step in progress. A recently used one serves again only where the
   * record's position agrees with it (a rollback or a new epoch moves the position; the emitter
   * is then built afresh).
   */
  private emitterFor(session: string): SessionEmitter {
    const r = this.record(session);
    const now = this.stepping.get(r);
    if (now) return now;
    const w = r.emitter;
    const e =
      w && w.position.seq === (r.seq ?? 0) && w.epoch === (r.epoch ?? 0)
        ? w
        : new SessionEmitter({
            agent: this.vendor,
            session,
            epoch: r.epoch ?? 0,
            startSeq: r.seq ?? 0,
            ...(this.opts.host ? { host: this.opts.host } : {}),
          });
    this.stepping.set(r, e);
    return e;
  }

  stop(): void {
    for (const r of this.records.values()) r.cell?.actor?.stop();
  }
}
