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
// The outbox's parts each have a file: the durable state (outbox-state.ts), the learn query
// (outbox-learn.ts), the claims (outbox-claims.ts), the relay's refusals (outbox-refusals.ts);
// the cursor and the link's flow control they all act on stay here, with the pump that sends
// from the log.
import type { Subscription } from 'rxjs';
import { SteeringError, eventText, type AepEvent } from '../protocol/index.js';
import { parseLog, type EventLog, type LogPosition, type LogRecord } from './log.js';
import { SessionClaims } from './outbox-claims.js';
import { LearnQuery } from './outbox-learn.js';
import { Refusals } from './outbox-refusals.js';
import { after, cmpLog, posOf, writeFileDurably, type OutboxState, type Position } from './outbox-state.js';
import { scanTail, touch, type Touched } from './outbox-touched.js';
import type { RelayLink } from './relay-link.js';

// The outbox's state file and positions, re-exported for the importers of this file.
export { readOutboxState, writeFileDurably, type OutboxState, type Position } from './outbox-state.js';

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

const HIGH_WATER = 1 << 20;
const READ_CHUNK = 256 * 1024;

export class Outbox {
  /** Frames written per kind, for the bench and tests. */
  readonly counters = { live: 0, resent: 0, claims: 0, learns: 0, refused: 0 };
  private confirmed: LogPosition;
  private readonly relayAt = new Map<string, Position>();
  private readonly refusals: Refusals;
  /** Positioned events written on this connection and not yet seen held: id → where (a refusal names the id). */
  private readonly inFlight = new Map<string, { session: string; p: Position; n: number }>();
  private written = 0;
  private persistTimer: NodeJS.Timeout | undefined;
  /** Sessions with events at or after `confirmed`, with their first and last position there. */
  private readonly touched = new Map<string, Touched>();
  private readonly claims = new SessionClaims();
  /** Durable end of each generation seen (the active one grows). */
  private durableEnd: LogPosition;
  private up = false;
  private learning = false;
  /** Where this connection has sent through; undefined until the hello's learn is done. */
  private cursor: LogPosition | undefined;
  private health: string | undefined;
  private pumpTimer: NodeJS.Timeout | undefined;
  private learnTimer: NodeJS.Timeout | undefined;
  private learnSeq = 0;
  private readonly subs: Subscription[] = [];
  private closed = false;
  private readonly opts: OutboxOptions;
  private learn: LearnQuery | undefined;

  constructor(opts: OutboxOptions, state: OutboxState | undefined) {
    this.opts = opts;
    this.refusals = new Refusals(opts.vendor, opts.onError, () => {
      this.counters.refused += 1;
      this.persistSoon();
      this.scheduleLearn();
    });
    const oldest = { gen: opts.oldestGeneration, offset: 0 };
    this.confirmed = state && cmpLog(state.confirmed, oldest) >= 0 ? state.confirmed : oldest;
    for (const [s, p] of Object.entries(state?.sessions ?? {})) this.relayAt.set(s, p);
    for (const [s, p] of Object.entries(state?.refused ?? {})) this.refusals.refusedAt.set(s, p);
    this.durableEnd = opts.log.end();
  }

  /** Starts following the link. Call once the log's tail has been fed through `restore`. */
  start(): void {
    const link = this.opts.link;
    if (!link) return;
    scanTail(
      this.opts.log,
      this.confirmed,
      this.durableEnd.gen,
      (gen) => this.segmentEnd(gen),
      8 * READ_CHUNK,
      this.touched,
    );
    this.subs.push(link.state$.subscribe((up) => (up ? this.onUp() : this.onDown())));
    this.subs.push(link.frames$.subscribe((f) => this.onFrame(f)));
  }

  /** A logged event seen while rebuilding from a snapshot or the log (no sending). */
  restore(e: AepEvent): void {
    this.claims.restore(e);
  }

  lastEvents(): Record<string, string> {
    return this.claims.lastEvents();
  }

  restoreLast(last: Record<string, string>): void {
    this.claims.restoreLast(last);
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
      this.claims.logged(s, text);
      touch(this.touched, s, p);
    }
    if (range.gen > this.durableEnd.gen || range.end > this.durableEnd.offset)
      this.durableEnd = { gen: range.gen, offset: range.end };
    const c = this.cursor;
    if (
      this.sending() &&
      c !== undefined &&
      !this.claims.queued() &&
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
    if (this.refusals.refusedAt.size > 0) out.refused = Object.fromEntries(this.refusals.refusedAt);
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
    return this.refusals.settledAt(s, this.relayAt.get(s));
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
      this.claims.sent(e.session!);
      this.inFlight.delete(e.id);
      this.inFlight.set(e.id, { session: e.session!, p, n: this.written++ });
    }
  }

  private onUp(): void {
    this.up = true;
    this.cursor = undefined;
    this.claims.connected();
    this.startLearn(true);
  }

  private onDown(): void {
    this.up = false;
    // Refusals only ever name events of the connection that is gone.
    this.inFlight.clear();
    this.refusals.connectionLost();
    this.learning = false;
    this.learn = undefined;
    this.cursor = undefined;
    this.claims.disconnected();
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
    const l = new LearnQuery(target, touched, hello, this.written);
    l.send(
      entries,
      this.opts.vendor,
      () => `aep-outbox-${++this.learnSeq}`,
      (text) => this.opts.link!.write(text),
    );
    this.learn = l;
    if (l.ids.size === 0) this.finishLearn();
  }

  private onFrame(f: Record<string, unknown>): void {
    if (f.type === 'error' && typeof f.cause === 'string' && typeof f.id !== 'string') {
      this.onRefused(f);
      return;
    }
    const l = this.learn;
    if (!l) return;
    if (l.heard(f, this.opts.vendor, (session) => this.claims.sourceOf(session), this.opts.onError)) this.finishLearn();
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
          this.refusals.outgrown(s, t.last);
        }
      }
    }
    this.persist();
    if (!hello && this.refusals.retryDue()) {
      // Refused for now: resend what the relay still lacks, backing off while it keeps refusing.
      this.refusals.retry();
      this.cursor = this.confirmed;
    } else if (covered) {
      this.refusals.covered();
    }
    if (hello) {
      // Resend from the confirmed point; once caught up, claim every session the resend did not.
      this.cursor = this.confirmed;
      this.claims.afterResend();
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
      if (this.cursor === undefined || cmpLog(this.cursor, this.durableEnd) < 0 || this.claims.queued()) {
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
    while (this.claims.queued()) {
      if (!this.roomy()) {
        this.schedulePump(20);
        return;
      }
      const claim = this.claims.next((s, text) => this.refusals.lastRefused(s, text));
      if (claim === undefined) continue;
      this.opts.link!.write(claim.text);
      this.claims.sent(claim.s);
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
        if (this.claims.queueAfterResend()) {
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

  /** An `error` frame naming an event this link wrote: settled for good, or sent again later (outbox-refusals.ts). */
  private onRefused(f: Record<string, unknown>): void {
    const id = f.cause as string;
    const sent = this.inFlight.get(id);
    this.inFlight.delete(id);
    this.refusals.refused(f, sent);
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
}
