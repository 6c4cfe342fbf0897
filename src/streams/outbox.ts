// The relay receives everything the log holds (D23). Events go to the relay from the log, never
// from a bounded memory queue: while the link is caught up a durable batch is written as it
// lands; otherwise (relay down, slow, just reconnected) a pump reads the log from where this
// connection got to. On every hello the adapter learns what the relay stored per session (a
// replay of its own events after the last known position, which the relay serves from its
// store) and resends from there; the relay dedupes on (source, id). What the relay holds is kept
// durably (`<log>.relay`): the log position before which the relay holds everything, and the
// per-session position for each session with events after it.
// Claims (D17, D23): a session is claimed by its first event; after a reconnect or restart each
// session the log knows, ended ones included, is claimed once by redelivering its last event.
// Refusals: the relay answers an event it will not take with an `error` frame naming it. One that
// resending cannot change (no emit right for the token, `retry: false`; an invalid event) settles
// the event as refused: recorded in the state file, said once, never resent, no longer holding
// back compaction. Any other refusal (a rival claim until its lease lapses) is retried.
import { existsSync, readFileSync, writeFileSync, renameSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Subscription } from 'rxjs';
import { SteeringError, eventText, type AepEvent } from '../protocol/index.js';
import { isCommandType } from '../protocol/types.js';
import { parseLog, syncDir, type EventLog, type LogPosition, type LogRecord } from './log.js';
import type { RelayLink } from './relay-link.js';

export interface Position {
  epoch: number;
  seq: number;
}

export interface OutboxOptions {
  /** Without one, the outbox only keeps what a snapshot and later claims need. */
  link?: RelayLink;
  log: EventLog;
  /** The adapter's agent token: the learn query asks for this agent's events. */
  vendor: string;
  /** Durable "relay has up to here" state. */
  statePath: string;
  /** Oldest generation still on disk (compaction may have removed older ones). */
  oldestGeneration: number;
  onError: (e: SteeringError) => void;
  /** Socket bytes buffered above which sending pauses (backpressure; the log keeps the rest). */
  highWater?: number;
  /** How often a connected link re-learns what the relay stored, when something is unconfirmed. */
  learnEveryMs?: number;
}

export interface OutboxState {
  /** Everything the relay must store lies at or after this log position. */
  confirmed: LogPosition;
  /** Per session with events after `confirmed`: what the relay was last seen to hold. */
  sessions: Record<string, Position>;
  /** Per session: the relay refused for good its events up to here (none of them is sent again). */
  refused?: Record<string, Position>;
}

const HIGH_WATER = 1 << 20;
const READ_CHUNK = 256 * 1024;
/** Sessions per learn query (the relay caps resume positions per subscription). */
const LEARN_CHUNK = 200;
/** First and longest wait before events a relay refused for now are sent again on the same link. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/**
 * The longest wait while the relay's store cannot write (D38 `store-unavailable`): it comes back
 * within a cluster's election, so history is filled again seconds after it does, not a minute.
 */
const STORE_RETRY_MAX_MS = 2000;

const after = (a: Position, b: Position): boolean => a.epoch > b.epoch || (a.epoch === b.epoch && a.seq > b.seq);
const posOf = (e: AepEvent): Position | undefined =>
  e.session !== undefined && e.seq !== undefined && !isCommandType(e.type)
    ? { epoch: e.epoch ?? 0, seq: e.seq }
    : undefined;
const cmpLog = (a: LogPosition, b: LogPosition): number => a.gen - b.gen || a.offset - b.offset;

export function readOutboxState(path: string): OutboxState | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const s = JSON.parse(readFileSync(path, 'utf8')) as OutboxState;
    if (
      typeof s?.confirmed?.gen === 'number' &&
      typeof s.confirmed.offset === 'number' &&
      typeof s.sessions === 'object' &&
      (s.refused === undefined || typeof s.refused === 'object')
    )
      return s;
  } catch {
    // An unreadable state file only costs a longer resend: the relay dedupes.
  }
  return undefined;
}

/** Writes `text` to `path` so a crash leaves the old or the new content, never a mix. */
export function writeFileDurably(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  const fd = openSync(tmp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDir(dirname(path));
}

interface Touched {
  first: Position;
  last: Position;
}

export class Outbox {
  /** Frames written per kind, for the bench and tests. */
  readonly counters = { live: 0, resent: 0, claims: 0, learns: 0, refused: 0 };
  private confirmed: LogPosition;
  private readonly relayAt = new Map<string, Position>();
  /** Per session, the last position the relay refused for good (durable, in the state file). */
  private readonly refusedAt = new Map<string, Position>();
  /** Positioned events written on this connection and not yet seen held: id → where (a refusal names the id). */
  private readonly inFlight = new Map<string, { session: string; p: Position; n: number }>();
  private written = 0;
  private readonly sources = new Map<string, string>();
  /** Sessions whose lasting refusal was said (once per run). */
  private readonly told = new Set<string>();
  /** Sessions refused for now on this connection: said once, sent again after `retryMs`. */
  private readonly refusedNow = new Set<string>();
  private retryMs = RETRY_FIRST_MS;
  private retryAt = 0;
  /** The last for-now refusal was the relay's store being unable to write (D38). */
  private storeDown = false;
  private persistTimer: NodeJS.Timeout | undefined;
  /** Sessions with events at or after `confirmed`, with their first and last position there. */
  private readonly touched = new Map<string, Touched>();
  /** Each session's last event as logged: the claim frame after a reconnect. */
  private readonly last = new Map<string, string>();
  /** Durable end of each generation seen (the active one grows). */
  private durableEnd: LogPosition;
  private up = false;
  private learning = false;
  /** Where this connection has sent through; undefined until the hello's learn is done. */
  private cursor: LogPosition | undefined;
  private claimQueue: string[] = [];
  /** A hello's claims are still to be queued (after the resend caught up). */
  private claimPending = false;
  private claimedHere = new Set<string>();
  private health: string | undefined;
  private pumpTimer: NodeJS.Timeout | undefined;
  private learnTimer: NodeJS.Timeout | undefined;
  private learnSeq = 0;
  private readonly subs: Subscription[] = [];
  private closed = false;
  private readonly opts: OutboxOptions;
  private learn:
    | {
        ids: Set<string>;
        seen: Map<string, Position>;
        target: LogPosition;
        touched: Map<string, Position>;
        failed: boolean;
        hello: boolean;
        mark: number;
      }
    | undefined;

  constructor(opts: OutboxOptions, state: OutboxState | undefined) {
    this.opts = opts;
    const oldest = { gen: opts.oldestGeneration, offset: 0 };
    this.confirmed = state && cmpLog(state.confirmed, oldest) >= 0 ? state.confirmed : oldest;
    for (const [s, p] of Object.entries(state?.sessions ?? {})) this.relayAt.set(s, p);
    for (const [s, p] of Object.entries(state?.refused ?? {})) this.refusedAt.set(s, p);
    this.durableEnd = opts.log.end();
  }

  /** Starts following the link. Call once the log's tail has been fed through `restore`. */
  start(): void {
    const link = this.opts.link;
    if (!link) return;
    this.scanTail();
    this.subs.push(link.state$.subscribe((up) => (up ? this.onUp() : this.onDown())));
    this.subs.push(link.frames$.subscribe((f) => this.onFrame(f)));
  }

  /** A logged event seen while rebuilding from a snapshot or the log (no sending). */
  restore(e: AepEvent): void {
    if (posOf(e)) this.last.set(e.session!, eventText(e));
  }

  lastEvents(): Record<string, string> {
    return Object.fromEntries(this.last);
  }

  restoreLast(last: Record<string, string>): void {
    for (const [s, t] of Object.entries(last)) this.last.set(s, t);
  }

  /** The oldest generation the relay may still need (compaction keeps it and every later one). */
  neededGeneration(): number {
    // Without a relay nothing is owed to one.
    return this.opts.link ? this.confirmed.gen : Number.MAX_SAFE_INTEGER;
  }

  /** A batch became durable at `range` in the log: remember it, and send it now if caught up. */
  appended(events: readonly AepEvent[], range: { gen: number; start: number; end: number }): void {
    const texts: string[] = [];
    for (const e of events) {
      const text = eventText(e);
      texts.push(text);
      const p = posOf(e);
      if (!p) continue;
      const s = e.session!;
      this.last.set(s, text);
      const t = this.touched.get(s);
      if (t) t.last = p;
      else this.touched.set(s, { first: p, last: p });
    }
    if (range.gen > this.durableEnd.gen || range.end > this.durableEnd.offset)
      this.durableEnd = { gen: range.gen, offset: range.end };
    const c = this.cursor;
    if (
      this.sending() &&
      c !== undefined &&
      this.claimQueue.length === 0 &&
      c.gen === range.gen &&
      c.offset === range.start &&
      this.roomy()
    ) {
      for (let i = 0; i < events.length; i += 1) {
        this.write(texts[i]!, events[i]!);
        this.counters.live += 1;
      }
      this.cursor = { gen: range.gen, offset: range.end };
    } else {
      this.schedulePump(0);
    }
    this.scheduleLearn();
  }

  /** The log started a new generation: a caught-up cursor moves with it. */
  rotated(gen: number, headerEnd: number): void {
    this.durableEnd = { gen, offset: headerEnd };
    if (this.cursor && this.cursor.gen === gen - 1 && this.cursor.offset >= this.segmentEnd(gen - 1))
      this.cursor = { gen, offset: headerEnd };
  }

  /** An event that is not history (a re-ack copy, `agent.health`): sent if the link is up, else gone. */
  sendLive(e: AepEvent): void {
    if (this.sending()) this.opts.link!.write(eventText(e));
  }

  /** The adapter's health (D22), re-sent after each hello while it is not ok. */
  setHealth(e: AepEvent): void {
    this.health = (e.data as { status?: string } | undefined)?.status === 'ok' ? undefined : JSON.stringify(e);
    this.sendLive(e);
  }

  state(): OutboxState {
    const sessions: Record<string, Position> = {};
    for (const s of this.touched.keys()) {
      const p = this.relayAt.get(s);
      if (p) sessions[s] = p;
    }
    const out: OutboxState = { confirmed: this.confirmed, sessions };
    if (this.refusedAt.size > 0) out.refused = Object.fromEntries(this.refusedAt);
    return out;
  }

  close(): void {
    this.closed = true;
    for (const s of this.subs) s.unsubscribe();
    clearTimeout(this.pumpTimer);
    clearTimeout(this.learnTimer);
    if (this.persistTimer) {
      clearTimeout(this.persistTimer);
      this.persistTimer = undefined;
      this.persist();
    }
  }

  /** What the relay holds or refused for good of session `s`: nothing up to here is sent again. */
  private settledAt(s: string): Position | undefined {
    const held = this.relayAt.get(s);
    const refused = this.refusedAt.get(s);
    if (!refused) return held;
    return held && !after(refused, held) ? held : refused;
  }

  // ---- connection -----------------------------------------------------------------------

  private sending(): boolean {
    return this.up && !this.learning && !this.closed && this.opts.link !== undefined;
  }

  private roomy(): boolean {
    return this.opts.link!.buffered() < (this.opts.highWater ?? HIGH_WATER);
  }

  private write(text: string, e: AepEvent): void {
    this.opts.link!.write(text);
    const p = posOf(e);
    if (p) {
      this.claimedHere.add(e.session!);
      this.inFlight.delete(e.id);
      this.inFlight.set(e.id, { session: e.session!, p, n: this.written++ });
    }
  }

  private onUp(): void {
    this.up = true;
    this.cursor = undefined;
    this.claimedHere = new Set();
    this.startLearn(true);
  }

  private onDown(): void {
    this.up = false;
    // Refusals only ever name events of the connection that is gone.
    this.inFlight.clear();
    this.refusedNow.clear();
    this.learning = false;
    this.learn = undefined;
    this.cursor = undefined;
    this.claimQueue = [];
    this.claimPending = false;
  }

  /**
   * Asks the relay, per session with unconfirmed events, for what it stored after the last known
   * position: the relay replays its own store, so what comes back is durable there. Nothing else
   * is sent meanwhile, so every event of this agent that arrives belongs to the answer.
   */
  private startLearn(hello: boolean): void {
    if (!this.up || this.closed) return;
    clearTimeout(this.learnTimer);
    this.learnTimer = undefined;
    const entries: { session: string; epoch: number; seq: number }[] = [];
    const touched = new Map<string, Position>();
    for (const [s, t] of this.touched) {
      touched.set(s, t.last);
      const known = this.relayAt.get(s);
      const from =
        known ?? (t.first.seq > 0 ? { epoch: t.first.epoch, seq: t.first.seq - 1 } : { epoch: t.first.epoch, seq: -1 });
      entries.push({ session: s, epoch: from.epoch, seq: from.seq });
    }
    this.learning = true;
    this.counters.learns += 1;
    const target = this.cursor ?? this.durableEnd;
    const ids = new Set<string>();
    for (let i = 0; i < entries.length; i += LEARN_CHUNK) {
      const id = `aep-outbox-${++this.learnSeq}`;
      ids.add(id);
      this.opts.link!.write(
        JSON.stringify({
          type: 'subscribe',
          id,
          filter: { agent: this.opts.vendor },
          capture: 'metadata',
          from: entries.slice(i, i + LEARN_CHUNK),
        }),
      );
      this.opts.link!.write(JSON.stringify({ type: 'unsubscribe', id }));
    }
    this.learn = { ids, seen: new Map(), target, touched, failed: false, hello, mark: this.written };
    if (ids.size === 0) this.finishLearn();
  }

  private onFrame(f: Record<string, unknown>): void {
    if (f.type === 'error' && typeof f.cause === 'string' && typeof f.id !== 'string') {
      this.onRefused(f);
      return;
    }
    const l = this.learn;
    if (!l) return;
    const type = f.type;
    if (typeof type === 'string' && type.includes('.')) {
      const e = f as unknown as AepEvent;
      const p = posOf(e);
      // Another identity's events for the session (a rival claim held it) are not this adapter's.
      if (!p || e.agent !== this.opts.vendor || e.source !== this.sourceOf(e.session!)) return;
      const seen = l.seen.get(e.session!);
      if (!seen || after(p, seen)) l.seen.set(e.session!, p);
      return;
    }
    if ((type === 'unsubscribed' || type === 'error') && typeof f.id === 'string' && l.ids.has(f.id)) {
      if (type === 'error') {
        l.failed = true;
        this.opts.onError(
          new SteeringError(
            'RELAY_PROTOCOL',
            `the relay refused the outbox's position query (${String(f.code)}); resending everything unconfirmed`,
          ),
        );
      }
      l.ids.delete(f.id);
      if (l.ids.size === 0) this.finishLearn();
    }
  }

  private finishLearn(): void {
    const l = this.learn!;
    const hello = l.hello;
    this.learn = undefined;
    this.learning = false;
    for (const [s, p] of l.seen) {
      const known = this.relayAt.get(s);
      if (!known || after(p, known)) this.relayAt.set(s, p);
    }
    // The relay answers frames in order: an event written before the query and not refused by now was taken.
    for (const [id, f] of this.inFlight) {
      if (f.n >= l.mark) break;
      this.inFlight.delete(id);
    }
    // Everything before the target is stored once every session touched before it is covered;
    // only then do the covered sessions stop needing their positions.
    let covered = !l.failed;
    for (const [s, lastThen] of l.touched) {
      const held = this.settledAt(s);
      if (!held || after(lastThen, held)) covered = false;
    }
    if (covered && cmpLog(l.target, this.confirmed) > 0) {
      this.confirmed = l.target;
      for (const [s, lastThen] of l.touched) {
        const t = this.touched.get(s);
        if (t && !after(t.last, lastThen)) {
          this.touched.delete(s);
          this.relayAt.delete(s);
          // Kept only while the session's last event is the refused one: its claim is not sent.
          const refused = this.refusedAt.get(s);
          if (refused && after(t.last, refused)) this.refusedAt.delete(s);
        }
      }
    }
    this.persist();
    if (!hello && this.refusedNow.size > 0 && Date.now() >= this.retryAt) {
      // Refused for now: resend what the relay still lacks, backing off while it keeps refusing.
      this.refusedNow.clear();
      this.retryAt = Date.now() + this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, this.storeDown ? STORE_RETRY_MAX_MS : RETRY_MAX_MS);
      this.cursor = this.confirmed;
    } else if (covered) {
      this.retryMs = RETRY_FIRST_MS;
      this.storeDown = false;
    }
    if (hello) {
      // Resend from the confirmed point; once caught up, claim every session the resend did not.
      this.cursor = this.confirmed;
      this.claimPending = true;
      if (this.health) this.opts.link!.write(this.health);
    }
    this.schedulePump(0);
    this.scheduleLearn();
  }

  private persist(): void {
    try {
      writeFileDurably(this.opts.statePath, JSON.stringify(this.state()));
    } catch (cause) {
      // Losing it only costs a longer resend after a restart (the relay dedupes).
      this.opts.onError(
        new SteeringError('LOG_WRITE_FAILED', `cannot record the relay's position in ${this.opts.statePath}`, {
          cause,
        }),
      );
    }
  }

  private scheduleLearn(): void {
    if (this.learnTimer || !this.up || this.touched.size === 0 || this.closed || !this.opts.link) return;
    this.learnTimer = setTimeout(() => {
      this.learnTimer = undefined;
      // Only once this connection sent everything durable so far, so the answer can cover it.
      if (this.learning || !this.up) return;
      if (this.cursor === undefined || cmpLog(this.cursor, this.durableEnd) < 0 || this.claimQueue.length > 0) {
        this.scheduleLearn();
        return;
      }
      this.startLearn(false);
    }, this.opts.learnEveryMs ?? 1000);
    this.learnTimer.unref();
  }

  // ---- pump -------------------------------------------------------------------------------

  private schedulePump(ms: number): void {
    if (this.pumpTimer || this.closed) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = undefined;
      this.pump();
    }, ms);
  }

  private segmentEnd(gen: number): number {
    return gen === this.durableEnd.gen ? this.durableEnd.offset : Number.MAX_SAFE_INTEGER;
  }

  /** Sends claims, then the log from the cursor, while the socket has room; never blocks a step. */
  private pump(): void {
    if (!this.sending() || this.cursor === undefined) return;
    while (this.claimQueue.length > 0) {
      if (!this.roomy()) {
        this.schedulePump(20);
        return;
      }
      const s = this.claimQueue.shift()!;
      const text = this.last.get(s);
      if (text === undefined || this.claimedHere.has(s) || this.lastRefused(s, text)) continue;
      this.opts.link!.write(text);
      this.claimedHere.add(s);
      this.counters.claims += 1;
    }
    for (;;) {
      if (!this.roomy()) {
        this.schedulePump(20);
        return;
      }
      const c: LogPosition = this.cursor;
      const end = this.segmentEnd(c.gen);
      let chunk: Buffer;
      try {
        chunk =
          c.offset < end ? this.opts.log.read(c.gen, c.offset, Math.min(READ_CHUNK, end - c.offset)) : Buffer.alloc(0);
      } catch (cause) {
        this.opts.onError(
          new SteeringError('LOG_WRITE_FAILED', `cannot read generation ${c.gen} of the event log for the relay`, {
            cause,
          }),
        );
        this.schedulePump(1000);
        return;
      }
      const whole = chunk.lastIndexOf(0x0a) + 1;
      if (whole === 0) {
        if (c.gen < this.durableEnd.gen && chunk.length === 0) {
          this.cursor = { gen: c.gen + 1, offset: 0 };
          continue;
        }
        if (chunk.length >= READ_CHUNK) {
          // One line longer than a chunk: read it whole.
          chunk = this.opts.log.read(c.gen, c.offset, end - c.offset);
          const w = chunk.indexOf(0x0a) + 1;
          if (w === 0) return;
          this.sendRecords(chunk.subarray(0, w));
          this.cursor = { gen: c.gen, offset: c.offset + w };
          continue;
        }
        if (this.claimPending) {
          this.claimPending = false;
          this.claimQueue = [...this.last.keys()].filter((s) => !this.claimedHere.has(s));
          this.pump();
          return;
        }
        this.scheduleLearn();
        return;
      }
      this.sendRecords(chunk.subarray(0, whole));
      this.cursor = { gen: c.gen, offset: c.offset + whole };
    }
  }

  private sendRecords(bytes: Buffer): void {
    parseLog(bytes, (r: LogRecord) => {
      if (r.k !== 'ev') return;
      const p = posOf(r.e);
      // Agent-scoped events are live only: the relay keeps no history for them.
      if (!p) return;
      const held = this.settledAt(r.e.session!);
      if (held && !after(p, held)) return;
      this.write(eventText(r.e), r.e);
      this.counters.resent += 1;
    });
  }

  /** The source of the session's events in this log (one per session and host). */
  private sourceOf(s: string): string | undefined {
    let source = this.sources.get(s);
    if (source === undefined) {
      const text = this.last.get(s);
      if (text === undefined) return undefined;
      source = (JSON.parse(text) as AepEvent).source;
      this.sources.set(s, source);
    }
    return source;
  }

  /** The session's last event is one the relay refused for good: claiming with it would be refused again. */
  private lastRefused(s: string, text: string): boolean {
    const refused = this.refusedAt.get(s);
    const p = refused && posOf(JSON.parse(text) as AepEvent);
    return p !== undefined && !after(p, refused!);
  }

  /** An `error` frame naming an event this link wrote: settled for good, or sent again later. */
  private onRefused(f: Record<string, unknown>): void {
    const id = f.cause as string;
    const code = String(f.code);
    const detail = typeof f.detail === 'string' ? f.detail : '';
    const sent = this.inFlight.get(id);
    this.inFlight.delete(id);
    // Envelope checks do not change for the same bytes; an emit right only with a new tokens file.
    const lasting = f.retry === false || code === 'invalid-event';
    if (!sent) {
      // Sent live only (agent.health, a repeated ack): nothing to settle, said once per code.
      if (this.told.has(`\u0000${code}`)) return;
      this.told.add(`\u0000${code}`);
      this.opts.onError(
        new SteeringError(
          'RELAY_REFUSED',
          `the relay refused an event sent to it live (agent health or a repeated ack; ${code}${detail ? `: ${detail}` : ''}). ${lasting ? this.remedy(code) : 'Such events are not resent.'}`,
        ),
      );
      return;
    }
    const s = sent.session;
    if (!lasting) {
      this.storeDown = code === 'store-unavailable';
      if (this.storeDown && this.retryMs > STORE_RETRY_MAX_MS) this.retryMs = STORE_RETRY_MAX_MS;
      if (this.refusedNow.has(s)) return;
      this.refusedNow.add(s);
      if (this.retryAt < Date.now()) this.retryAt = Date.now() + this.retryMs;
      this.opts.onError(
        new SteeringError(
          'RELAY_REFUSED',
          `the relay refused events of session ${s} for now (${code}${detail ? `: ${detail}` : ''}); the adapter keeps them and sends them again`,
        ),
      );
      return;
    }
    const before = this.refusedAt.get(s);
    if (before && !after(sent.p, before)) return;
    this.refusedAt.set(s, sent.p);
    this.counters.refused += 1;
    this.persistSoon();
    this.scheduleLearn();
    if (this.told.has(s)) return;
    this.told.add(s);
    this.opts.onError(
      new SteeringError(
        'RELAY_REFUSED',
        `the relay refused the events of session ${s} (${code}${detail ? `: ${detail}` : ''}); they stay in this adapter's log and are not sent again. ${this.remedy(code)}`,
      ),
    );
  }

  private remedy(code: string): string {
    return code === 'invalid-event'
      ? 'Run the same aep-steering version for the relay and the adapter.'
      : `Give this adapter's token emit rights for ${this.opts.vendor} in the relay's tokens file ("emit": ["${this.opts.vendor}"]) and restart the relay; events from then on reach it.`;
  }

  /** Refusals come in runs (every event of a session): one durable write covers a run. */
  private persistSoon(): void {
    if (this.persistTimer || this.closed) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      this.persist();
    }, 20);
    this.persistTimer.unref();
  }

  /** After a restart: which sessions have events after the confirmed point (the log's tail). */
  private scanTail(): void {
    let c: LogPosition = this.confirmed;
    for (;;) {
      const end = this.segmentEnd(c.gen);
      let chunk: Buffer;
      try {
        chunk =
          c.offset < end
            ? this.opts.log.read(c.gen, c.offset, Math.min(8 * READ_CHUNK, end - c.offset))
            : Buffer.alloc(0);
      } catch {
        chunk = Buffer.alloc(0);
      }
      let whole = chunk.lastIndexOf(0x0a) + 1;
      if (whole === 0 && chunk.length > 0 && c.offset < end) {
        chunk = this.opts.log.read(c.gen, c.offset, end - c.offset);
        whole = chunk.indexOf(0x0a) + 1;
      }
      if (whole === 0) {
        if (c.gen < this.durableEnd.gen) {
          c = { gen: c.gen + 1, offset: 0 };
          continue;
        }
        return;
      }
      parseLog(chunk.subarray(0, whole), (r) => {
        if (r.k !== 'ev') return;
        const p = posOf(r.e);
        if (!p) return;
        const t = this.touched.get(r.e.session!);
        if (t) t.last = p;
        else this.touched.set(r.e.session!, { first: p, last: p });
      });
      c = { gen: c.gen, offset: c.offset + whole };
    }
  }
}
