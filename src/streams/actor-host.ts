// Holds every session the adapter serves, feeds each its inputs, and alone turns what it
// announces into AEP envelopes (stamp.ts): each session is one record (session-record.ts) with
// its cell, its (epoch, seq) and the emitter that stamps it (AEP-0001 §7). Every command's ack
// is recorded as its exact serialisation so a retry gets it back byte for byte (AEP-0004 §3,
// D4). Each step keeps an undo beside it until its records are durable (D22). Muted stepping
// (replay) advances sessions and touches nothing else.
import type { InspectionEvent, Observer } from 'xstate';
import { SessionEmitter, SteeringError, newId, type AepCommand, type AepEvent } from '../protocol/index.js';
import { decideUnknownSession } from '../machines/gate.js';
import { decisionsFrom } from '../machines/decisions.js';
import { repliesNeutral } from '../machines/moment.js';
import type { AckDecision, SessionContext } from '../machines/session-context.js';
import type { SessionInput } from '../machines/session-input.js';
import type { SessionOutput } from '../machines/session-output.js';
import type { VendorSurface } from './surface.js';
import type { LogRecord } from './log.js';
import {
  SessionStepper,
  cellState,
  contextOf,
  stateValueOf,
  type SessionCell,
  type SessionRecord,
  type Undo,
  viewOf,
  type SessionView,
} from './session-record.js';
import type { HostState, PersistedCell } from './snapshot.js';
import { commandInput, description, hookInput, type CommandGates } from './session-inputs.js';
import { OpenHooks } from './open-hooks.js';
import { stamp, stampObservations, type ObservationSink, type StampSource, type StampSurface } from './stamp.js';
import type { Effect, SessionItem, StepResult } from './step-types.js';
import { asEcho, asOpened, startable } from './lane-host.js'; // D30, D43: echoes, openers, lanes
import { lanesOf } from '../machines/lane-steps.js';
import { endsSession, type HomeInput, type HomeSession } from './home.js';

const DEFAULT_ATTENTION_TIMEOUT_MS = 55_000; // D14

export interface HostOptions extends CommandGates {
  surface: VendorSurface;
  attentionTimeoutMs?: number;
  /** D25 resume window (`AEP_RESUME_WINDOW_MS`); the surface's otherwise. */
  resumeWindowMs?: number;
  /** D27: a delivering reply also tells the user, where the vendor has a field for it (default true; `--quiet` off). */
  notice?: boolean;
  /** Host segment of event sources; the machine's hostname otherwise. */
  host?: string;
  inspect?: Observer<InspectionEvent> | ((e: InspectionEvent) => void);
  onError?: (e: SteeringError) => void;
  /** D45: the home session spawns go to, when spawning is on. */
  home?: HomeSession;
}

const EMPTY: StepResult = { events: [], records: [], effects: [] };
/** Bound on kept emitters: the sessions active at once, not every session the host holds. */
const WARM_EMITTERS = 256;

/** Inputs that bring a session's cell into being (the hook moments, see apply()). */
const SPAWNS = new Set<string>(['hook.moment', 'hook.held', 'hook.end']);
/** Commands that, for a session with no cell, are refused once and remembered (D6). */
const ORPHANS = new Set<string>(
  ['instruct', 'withdraw', 'queue', 'respond', 'send_input', 'forward', 'cancel'].map((c) => `command.${c}`),
);

export class ActorHost {
  readonly surface: VendorSurface;
  private readonly opts: HostOptions;
  /** Every session, in the order their cells came into being. */
  private readonly records = new Map<string, SessionRecord>();
  /** Records whose emitter is kept warm, so a busy session does not rebuild (and re-check) it per step. */
  private readonly warm = new Set<SessionRecord>();
  /** Command dedupe key → its ack, exactly as first serialised. */
  private readonly recorded = new Map<string, string>();
  /** Hooks whose reply is still owed: the bus's arrivals and what the vendor sent, one map. */
  readonly hooks = new OpenHooks();
  private readonly stepper: SessionStepper;
  /** Undo entries of steps whose records are not durable yet, oldest first (D22). */
  private undos: Undo[] = [];
  private stepCount = 0;
  /** Who emits a hook's observations and hears of one that cannot be. */
  private readonly sink: ObservationSink;
  /** What stamping reads from this host: emitters, recorded acks, open hooks. */
  private readonly source: StampSource = {
    emitter: (session) => this.emitterFor(session),
    ack: (key) => this.recorded.get(key),
    hook: (hookId) => this.hooks.hook(hookId),
  };
  /** The vendor's reply builders, as stamping calls them. */
  private readonly replies: StampSurface;
  /** Emitters of the step in progress, by the record they stamp for. */
  private readonly stepping = new Map<SessionRecord, SessionEmitter>();

  constructor(opts: HostOptions) {
    this.opts = opts;
    this.surface = opts.surface;
    this.stepper = new SessionStepper(opts.surface.token, opts.inspect);
    const surface = opts.surface;
    this.sink = { vendor: surface.token, host: opts.host, onError: opts.onError };
    this.replies = {
      contextReply: surface.contextReply.bind(surface),
      decisionReply: surface.decisionReply.bind(surface),
      ...(surface.noticeReply === undefined ? {} : { noticeReply: surface.noticeReply.bind(surface) }),
      notice: opts.notice !== false,
      ...(opts.starts === undefined ? {} : { startable: (lanes) => startable(lanes, opts.starts) }),
    };
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

  /** D7–D8: the machine's own answer, before the step, to whether this moment gets the neutral reply
   * whatever its step does (machines/moment.ts `repliesNeutral`; test/machines/paths.test.ts). */
  answersNeutrally(item: Extract<SessionItem, { kind: 'hook' }>): boolean {
    const c = item.hook.class;
    if (c.kind !== 'moment') return false;
    const cell = this.records.get(item.session)?.cell;
    const turn = c.turn ?? item.hook.bounds;
    const opener = asOpened(item.hook, this.context(item.session)).opener;
    const input = { ...c, ...(turn === undefined ? {} : { turn }), ...(opener === undefined ? {} : { opener }) };
    return repliesNeutral(cell && cellState(cell), input);
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
    for (const { session, cell } of this.records.values()) if (cell) views.push(viewOf(session, cell));
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
    if (u.hookId !== undefined) this.hooks.answered(u.hookId);
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

  /** Restores a recorded ack and the epoch memory from a logged event (D11); `bytes`: its text as logged. */
  restoreEvent(e: AepEvent, ack: string | undefined, bytes?: string): void {
    if (ack !== undefined) this.recorded.set(ack, bytes ?? JSON.stringify(e));
    if (e.session !== undefined && e.seq !== undefined) {
      const next = (e.epoch ?? 0) + 1;
      const r = this.record(e.session);
      if ((r.epoch ?? 0) < next) r.epoch = next;
    }
  }

  /** Feeds one logged input to its session, every sink muted: a session kept as data folds it
   * (machines/fold.ts, ~10x faster); a new session, an orphan command, a live actor take the live path. */
  replayInput(session: string, input: SessionInput): void {
    if (session === this.opts.home?.session) return void this.opts.home.replay(input as unknown as HomeInput);
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
    const home = this.opts.home?.recover(at);
    if (home !== undefined) out.push(this.step(home));
    for (const session of this.sessionKeys()) {
      const ctx = this.context(session);
      const owed =
        ctx !== undefined &&
        (ctx.inFlight.length > 0 ||
          ctx.holds.length > 0 ||
          ctx.inputs.some((i) => i.phase === 'sending') ||
          ctx.cancel?.acked === false ||
          ctx.forwards.length > 0 ||
          (ctx.lanes?.length ?? 0) > 0 ||
          (ctx.laned?.length ?? 0) > 0);
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
          : new SteeringError('INTERNAL', `session step failed: ${String(cause)}`, { cause });
      this.opts.onError?.(err);
      if (item.kind !== 'hook') return EMPTY;
      // Fail open (D15): the waiting hook gets the neutral reply, and anything the step had
      // already handed to that reply goes back to the head of the queue (D9).
      this.hooks.answered(item.hookId);
      const neutral: Effect = { kind: 'neutral', session: item.session, hookId: item.hookId };
      try {
        const back = this.stepUnsafe(
          { kind: 'input', session: item.session, input: { type: 'reply.failed', at: item.at, hookId: item.hookId } },
          undo,
        );
        return { events: back.events, records: back.records, effects: [...back.effects, neutral] };
      } catch (again) {
        this.opts.onError?.(
          new SteeringError('INTERNAL', `could not return a failed reply's instructions: ${String(again)}`, {
            cause: again,
          }),
        );
        return { ...EMPTY, effects: [neutral] };
      }
    }
  }

  private stepUnsafe(item: SessionItem, undo: Undo): StepResult {
    // D45: a stop of a whole session is its home's to carry out (only a worker can be stopped).
    const home = item.session === this.opts.home?.session || (item.kind === 'command' && endsSession(item.command));
    if (home && this.opts.home !== undefined) {
      const h = this.opts.home.step(item, this.source, (s) => this.context(s)?.endedOnce === true);
      this.keepAcks(h.acks, undo);
      return h;
    }
    const events: AepEvent[] = [];
    const records: LogRecord[] = [];
    let input: SessionInput;
    // D37: an invocation that fires nothing but its end moment (`claude mcp list`) is not a
    // session: nothing is emitted, claimed or logged for it, and the hook gets the neutral reply.
    if (item.kind === 'hook' && item.hook.class.kind === 'end' && !this.records.get(item.session)?.cell) {
      return { events, records, effects: [{ kind: 'neutral', session: item.session, hookId: item.hookId }] };
    }
    if (item.kind === 'hook') {
      const echo = asOpened(asEcho(item.hook, this.context(item.session)), this.context(item.session)); // D30, D43
      if (echo !== item.hook) item = { ...item, hook: echo };
      const emitter = this.emitterFor(item.session);
      // A vendor that names no run but marks its turns gets adapter-minted run ids: the opening
      // moment mints one, and run, tool and delegation events carry it until the turn closes.
      // A vendor that names its runs (Codex turn_id, Claude Code prompt_id) has the run its opening
      // moment names kept instead, so the turn's terminal (a cancel's `run.cancelled`) names it too.
      const cls = item.hook.class;
      const ctx = this.context(item.session);
      const opens = cls.kind === 'moment' && (cls.turn ?? item.hook.bounds) === 'opens';
      const minted = cls.kind === 'moment' && cls.turn === 'opens' ? `run_${newId(item.at)}` : undefined;
      const named = opens ? item.hook.observations.find((o) => o.type === 'run.started')?.run : undefined;
      const runId = opens ? (minted ?? named) : ctx?.run;
      const firstId = stampObservations(item, emitter, { runId, ctx }, this.sink, events, records);
      const lanes = this.opts.lanes === undefined ? undefined : lanesOf(ctx);
      const starts = this.opts.starts === undefined ? undefined : startable(lanesOf(ctx), this.opts.starts);
      const described = description(
        this.records.get(item.session)?.described,
        item.hook.about,
        this.surface,
        lanes,
        starts,
      );
      if (described !== undefined) {
        this.record(item.session).described = described.described;
        const e = emitter.emit({ ...described.fields, at: item.at, id: newId(item.at) });
        events.push(e);
        records.push({ k: 'ev', e });
      }
      const times = {
        windowMs: this.opts.resumeWindowMs ?? this.surface.resumeWindowMs ?? 0,
        attentionTimeoutMs: this.attentionTimeoutMs,
      };
      const opened = opens ? runId : undefined;
      input = hookInput(item, this.context(item.session), times, firstId, opened);
      this.hooks.classified(item.hookId, item.hook);
    } else if (item.kind === 'command') {
      input = commandInput(item, this.surface, this.opts, this.context(item.session));
    } else {
      input = item.input;
    }
    const before = this.context(item.session);
    const outputs = this.apply(item.session, input);
    // Hooks and commands are always kept (audit); a timer or write result only when it changed
    // something, so idle ticks do not grow the log.
    const changed = outputs.length > 0 || this.context(item.session) !== before;
    if (item.kind !== 'input' || changed) records.push({ k: 'in', s: item.session, i: input });
    const out = stamp(item.session, this.source, input, outputs, this.replies, events, records);

    this.keepAcks(out.acks, undo);
    for (const hookId of out.answered) this.hooks.answered(hookId);
    return { events: out.events, records: out.records, effects: out.effects };
  }

  /** Records a step's acks (D4), each with what it replaced for the step's undo (D22). */
  private keepAcks(acks: readonly [string, string][], undo: Undo): void {
    for (const [key, text] of acks) {
      undo.acks.push([key, this.recorded.get(key)]);
      this.recorded.set(key, text);
    }
  }

  /** Steps the session (spawning it for a hook) and returns what it announced. */
  private apply(session: string, input: SessionInput): SessionOutput[] {
    let cell = this.records.get(session)?.cell;
    if (!cell) {
      if (ORPHANS.has(input.type) && 'command' in input) return this.orphanCommand(session, input);
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

  /** The emitter for the step in progress; a recent one serves again only where the record's position
   * agrees with it (a rollback or a new epoch moves the position, and it is built afresh). */
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
