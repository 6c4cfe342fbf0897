// Session history in the events stream. Each node keeps an index of the sessions (last arrival,
// highest position) fed by one ordered consumer on every session subject, which also brings the
// copies other nodes stored for live fan-out here. Replay reads one session's two rings with an
// ordered consumer and orders them as the SQLite store does.
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { DeliverPolicy, type JsMsg, type PubAck } from '@nats-io/jetstream';
import { before, firstFrom, interleaveByArrival, placeSorted, same } from '../positions.js';
import type { Admission, Position, Replay } from '../store.js';
import { untilReady, type Engine } from './engine.js';
import { ephemeral, Feed } from './feed.js';
import { MIN_PUBLISH_MS, WRITE_DEADLINE_MS, type Faults } from './faults.js';
import { admissionId, sessionToken } from './subjects.js';

const NODE = 'Aep-Node';
const EPOCH = 'Aep-Epoch';
const SEQ = 'Aep-Seq';

/** A replay's fetch: the server ends it after this; silent for a second longer, it is given up. */
const REPLAY_FETCH_MS = 2000;
const REPLAY_STALL_MS = REPLAY_FETCH_MS + 1000;
const REPLAY_STALLED = `the history fetch heard nothing for ${REPLAY_STALL_MS / 1000} s (its JetStream server went quiet)`;
/** A session whose failed event was never resent stops holding back its later ones after this. */
const HOLE_KEPT_MS = 10 * 60_000;
/** Beyond this many failed positions a lane keeps the earliest (a resend starts there). */
const HOLES_KEPT = 65_536;

/** The first failed position of `lane` after `pos`, or undefined. */
function holeAfter(lane: Lane, pos: Position): Position | undefined {
  const i = firstFrom(lane.holes, pos);
  const at = lane.holes[i];
  return at !== undefined && same(at, pos) ? lane.holes[i + 1] : at;
}

interface Job {
  a: Admission;
  token: string;
  pos?: Position;
  /** When the core handed it over: the write is confirmed or refused within WRITE_DEADLINE_MS of it. */
  at: number;
  /** Its place in the order the core handed writes over (the session's recency once stored). */
  order: number;
  done: (fresh: boolean) => void;
  fail: (err: Error) => void;
  duplicates: (a: Admission) => void;
}

/** One session's writes in flight and the positions that failed and were not stored since. */
interface Lane {
  queue: Job[];
  busy: boolean;
  /**
   * Failed positions not stored since, earliest first: the first holds back the session's later
   * events; once it is stored the next one does (the first may be resent alone, a repeated ack
   * out of its log's order, before the resend of the rest).
   */
  holes: Position[];
  /** When a failed position was last added to `holes`. */
  holesAt: number;
  /** The last round was confirmed whole: the next one may pipeline. */
  trusted?: boolean;
  /** Events this node is writing again itself, in position order (see `repair`). */
  repairing?: Job[];
}

interface Indexed {
  session: string;
  /**
   * When the session was last written, on this node's clock of admissions and arrivals
   * (recency for eviction and replay-all): sessions' writes confirm in their own lanes, so the
   * order they were handed over counts, not the stream's.
   */
  last: number;
  /** Highest position held: the same position again is a redelivery (an adapter re-claiming). */
  top?: Position;
  /** `Nats-Msg-Id` of the event at `top`: only that event again is the redelivery. */
  topId?: string;
}

interface Row {
  arrival: number;
  pos?: Position;
  raw: string;
}

/** Orders one session's rows like the SQLite store: positions by `(epoch, seq)`, seq-less ones by arrival among them. */
function orderRows(rows: Row[], after: Position | undefined, bufferCap: number): Replay {
  const from = after ?? { epoch: -1, seq: -1 };
  const all = rows
    .filter((r) => r.pos !== undefined)
    .sort((a, b) => (before(a.pos!, b.pos!) ? -1 : before(b.pos!, a.pos!) ? 1 : a.arrival - b.arrival));
  const positioned = all.filter((r) => before(from, r.pos!));
  let since = 0;
  if (after !== undefined) for (const r of all) if (!before(from, r.pos!)) since = Math.max(since, r.arrival);
  const loose = rows.filter((r) => r.pos === undefined && r.arrival > since).sort((a, b) => a.arrival - b.arrival);
  const out: Replay = { items: interleaveByArrival(positioned, loose) };
  // The ring does not say what it evicted. A full ring has evicted unless it still starts at
  // (0, 0); a position right before the first held one (positions run on within an epoch) misses nothing.
  const first = all[0]?.pos;
  const full = all.length >= bufferCap && first !== undefined && !(first.epoch === 0 && first.seq === 0);
  const adjacent = first !== undefined && from.epoch === first.epoch && from.seq === first.seq - 1;
  if (full && before(from, first) && !adjacent && positioned[0]) out.exhausted = { ...positioned[0].pos! };
  return out;
}

function position(h: MsgHdrs | undefined): Position | undefined {
  const e = h?.get(EPOCH);
  const s = h?.get(SEQ);
  return e && s ? { epoch: Number(e), seq: Number(s) } : undefined;
}

/**
 * A cluster that lost a server still counts it as a peer and may place a new one-replica
 * consumer there, where it never answers: try again (a new placement) a few times.
 */
async function placed<T>(make: () => Promise<T>, tries = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await make();
    } catch (err) {
      if (i >= tries || !/timeout/i.test((err as Error).message)) throw err;
    }
  }
}

export class NatsHistory {
  private readonly index = new Map<string, Indexed>();
  private readonly lanes = new Map<string, Lane>();
  private clock = 0;
  private events = 0;
  private stopped = false;

  constructor(
    private readonly engine: Engine,
    private readonly node: string,
    readonly bufferCap: number,
    private readonly sessionCap: number,
    /** A copy another node stored, for live fan-out here. */
    private readonly remote: (line: string) => void,
    private readonly report: (err: Error) => void,
    private readonly faults: Faults,
    /** Why nothing can be written now (the connection is down), or undefined. */
    private readonly down: () => string | undefined,
    private readonly log: (line: string) => void,
  ) {}

  /** Reads the index (each subject's last event), then follows every new event. */
  async start(): Promise<void> {
    const { jsm, names } = this.engine;
    const info = await untilReady(() => jsm.streams.info(names.eventsStream));
    this.events = info.state.messages;
    const upTo = info.state.last_seq;
    let ready!: () => void;
    const indexed = new Promise<void>((resolve) => (ready = resolve));
    if (upTo === 0 || info.state.messages === 0) ready();
    let indexing = true;
    const quick = this.engine.quick;
    this.feed = new Feed(
      {
        what: 'the session index',
        open: (from) => ephemeral(this.engine, names.eventsStream, names.allEvents, from, DeliverPolicy.LastPerSubject),
        lastSeq: async () => (await quick.jsm.streams.info(names.eventsStream)).state.last_seq,
        onMessage: (m) => {
          if (this.stopped) return;
          // Once indexed, everything is new (a restarted server may number new events at or below `upTo`).
          this.see(m, indexing && m.seq <= upTo);
          if (m.seq >= upTo) {
            indexing = false;
            ready();
          }
        },
      },
      this.log,
    );
    await untilReady(() => this.feed!.start());
    await indexed;
  }

  /** The connection came back: the feed's consumer may be gone with its server. */
  reopen(): void {
    this.feed?.reconnected();
  }

  private feed: Feed | undefined;

  private see(m: JsMsg, old: boolean): void {
    const token = m.subject.split('.')[2]!;
    // Indexed, counted and fanned out when this node stored it.
    if (!old && m.headers?.get(NODE) === this.node) return;
    const raw = m.string();
    let session = this.index.get(token)?.session;
    if (session === undefined) session = (JSON.parse(raw) as { session: string }).session;
    this.note(token, session, ++this.clock, position(m.headers), m.headers?.get('Nats-Msg-Id'));
    if (!old) {
      this.events += 1;
      this.remote(raw);
    }
  }

  private note(token: string, session: string, order: number, pos: Position | undefined, msgId?: string): void {
    const entry: Indexed = this.index.get(token) ?? { session, last: 0 };
    entry.last = Math.max(entry.last, order);
    if (pos && (entry.top === undefined || before(entry.top, pos))) {
      entry.top = pos;
      entry.topId = msgId;
    }
    this.index.delete(token);
    this.index.set(token, entry);
  }

  /**
   * Stores new events, each session's in order; a redelivery (same `(source, id)` within the
   * window, or the session's top position again) is not stored and `duplicates` gets it. Rejects
   * when any event of the list was not confirmed (D38): the core refuses them `store-unavailable`
   * and their senders resend (what was stored of the list is deduped then).
   */
  admitAll(list: readonly Admission[], duplicates: (a: Admission) => void): Promise<boolean[]> {
    const at = Date.now();
    return Promise.all(
      list.map(
        (a) =>
          new Promise<boolean>((done, fail) => {
            const token = sessionToken(a.session);
            const positioned = a.epoch !== undefined || a.seq !== undefined;
            const job: Job = { a, token, at, order: ++this.clock, done, fail, duplicates };
            if (positioned) job.pos = { epoch: a.epoch ?? 0, seq: a.seq ?? 0 };
            let lane = this.lanes.get(token);
            if (lane === undefined) {
              lane = { queue: [], busy: false, holes: [], holesAt: 0 };
              this.lanes.set(token, lane);
            }
            lane.queue.push(job);
            if (!lane.busy) void this.run(token, lane);
          }),
      ),
    );
  }

  /**
   * One session's writes, a round at a time: what queued while a round was out goes out
   * together when it is confirmed. So a later event of a session is not stored while an
   * earlier one failed (no hole for a resend to skip), yet a busy session still pipelines.
   * After a failure the next round is its first event alone: a store that fails again fails
   * that one, not some of a pipelined round.
   */
  private async run(token: string, lane: Lane): Promise<void> {
    lane.busy = true;
    while (lane.queue.length > 0) await this.round(lane, lane.queue.splice(0, lane.trusted ? lane.queue.length : 1));
    lane.busy = false;
    if (lane.holes.length === 0 || Date.now() - lane.holesAt > HOLE_KEPT_MS) this.lanes.delete(token);
  }

  private async round(lane: Lane, jobs: Job[]): Promise<void> {
    const { js, names } = this.engine;
    const sent: { job: Job; ack: Promise<PubAck> | undefined }[] = [];
    // The earliest position not stored as this round goes: a hole sent in it counts as filled
    // (optimistically: a failure of it is undone below), and the next failed one holds then.
    let hole = lane.holes[0];
    // Refused before it was sent, it holds back the session's later events as a failed write does.
    const unsent = (job: Job, reason: string) => {
      if (this.holdBack(lane, job) && (hole === undefined || before(job.pos!, hole))) hole = job.pos;
      job.fail(new Error(reason));
    };
    for (const job of jobs) {
      const down = this.down();
      if (down !== undefined) {
        unsent(job, down);
        continue;
      }
      const pos = job.pos;
      if (pos && hole && before(hole, pos)) {
        const at = `${hole.epoch}:${hole.seq}`;
        job.fail(new Error(`an earlier event of session ${job.a.session} (${at}) is not stored yet; resend from it`));
        continue;
      }
      if (pos && hole && same(pos, hole)) hole = holeAfter(lane, pos);
      // The claim-renewing redelivery of a session's last event, past the dedupe window.
      const entry = this.index.get(job.token);
      if (pos && entry?.top && same(entry.top, pos) && entry.topId === admissionId(job.a.source, job.a.id)) {
        sent.push({ job, ack: undefined });
        continue;
      }
      const left = job.at + WRITE_DEADLINE_MS - Date.now();
      const failing = this.faults.reason('events');
      if (left < MIN_PUBLISH_MS && failing !== undefined) {
        unsent(job, failing);
        continue;
      }
      const h = headers();
      h.set(NODE, this.node);
      if (pos) {
        h.set(EPOCH, String(pos.epoch));
        h.set(SEQ, String(pos.seq));
      }
      const ack = js.publish(names.events(job.token, pos !== undefined), job.a.raw, {
        msgID: admissionId(job.a.source, job.a.id),
        headers: h,
        timeout: Math.max(MIN_PUBLISH_MS, left),
      });
      // Settled below, in order; a rejection never goes unhandled meanwhile.
      ack.catch(() => {});
      sent.push({ job, ack });
    }
    const failedJobs: Job[] = [];
    let storedAfter = false;
    lane.trusted = true;
    for (const { job, ack } of sent) {
      let r: PubAck | undefined;
      try {
        r = ack === undefined ? undefined : await ack;
      } catch (err) {
        lane.trusted = false;
        this.faults.writeFailed(err as Error);
        if (job.pos) {
          failedJobs.push(job);
          this.holdBack(lane, job);
        }
        job.fail(err as Error);
        continue;
      }
      if (r !== undefined) this.faults.writeConfirmed();
      if (failedJobs.length > 0 && job.pos && r !== undefined && !r.duplicate) storedAfter = true;
      if (job.pos) this.filled(lane, job.pos);
      await this.confirmed(job, r);
    }
    if (storedAfter) void this.repair(lane, failedJobs);
  }

  /**
   * A positioned event not stored: the session's later events wait for it (a later one stored
   * would make its sender, learning what the relay holds, never send it again). Not one at or
   * below the highest position held (a claim's redelivery, sent once and never again): holding
   * back behind it would wait for a resend that does not come.
   */
  private holdBack(lane: Lane, job: Job): boolean {
    const top = this.index.get(job.token)?.top;
    const pos = job.pos;
    if (!pos || (top !== undefined && !before(top, pos))) return false;
    lane.holesAt = Date.now();
    placeSorted(lane.holes, pos, HOLES_KEPT);
    return true;
  }

  /** `pos` is stored: it is no longer a hole. */
  private filled(lane: Lane, pos: Position): void {
    const i = firstFrom(lane.holes, pos);
    const at = lane.holes[i];
    if (at !== undefined && same(at, pos)) lane.holes.splice(i, 1);
  }

  /**
   * A later event of the session was stored although an earlier one of the same round failed:
   * its sender, asking what the relay holds, would never resend the earlier one. So this node
   * writes the failed ones again itself (same `Nats-Msg-Id`: a resend meanwhile is deduped)
   * until they are confirmed; until then the session's holes hold back its later events.
   */
  private async repair(lane: Lane, more: Job[]): Promise<void> {
    // A repair under way takes these too: dropped, they would be missing for good.
    if (lane.repairing) {
      lane.repairing.push(...more);
      lane.repairing.sort((a, b) => (before(a.pos!, b.pos!) ? -1 : before(b.pos!, a.pos!) ? 1 : 0));
      return;
    }
    const failed = [...more];
    lane.repairing = failed;
    const { js, names } = this.engine;
    const until = Date.now() + HOLE_KEPT_MS;
    try {
      while (failed.length > 0 && !this.stopped && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        const job = failed[0]!;
        const h = headers();
        h.set(NODE, this.node);
        h.set(EPOCH, String(job.pos!.epoch));
        h.set(SEQ, String(job.pos!.seq));
        try {
          const msgID = admissionId(job.a.source, job.a.id);
          const r = await js.publish(names.events(job.token, true), job.a.raw, {
            msgID,
            headers: h,
            timeout: WRITE_DEADLINE_MS,
          });
          failed.shift();
          if (!r.duplicate) {
            this.events += 1;
            this.note(job.token, job.a.session, job.order, job.pos, admissionId(job.a.source, job.a.id));
          }
          this.filled(lane, job.pos!);
        } catch {
          // still failing: the next try follows
        }
      }
      const left = failed[0];
      if (left)
        this.report(
          new Error(`session ${left.a.session}: event ${left.a.id} could not be stored again; its history may lack it`),
        );
    } finally {
      lane.repairing = undefined;
    }
  }

  private async confirmed(job: Job, ack: PubAck | undefined): Promise<void> {
    const fresh = ack !== undefined && !ack.duplicate;
    const id = admissionId(job.a.source, job.a.id);
    if (fresh) {
      this.events += 1;
      const isNew = !this.index.has(job.token);
      this.note(job.token, job.a.session, job.order, job.pos, id);
      if (isNew) await this.evictBeyondCap().catch((err: Error) => this.report(err));
    } else {
      if (ack !== undefined && job.pos) this.note(job.token, job.a.session, job.order, job.pos, id);
      job.duplicates(job.a);
    }
    job.done(fresh);
  }

  /** Beyond the session cap the least recently written session is purged (every node's index learns of it on replay). */
  private async evictBeyondCap(): Promise<void> {
    while (this.index.size > this.sessionCap) {
      let token: string | undefined;
      let oldest = Infinity;
      for (const [t, e] of this.index) if (e.last < oldest) [token, oldest] = [t, e.last];
      this.index.delete(token!);
      const r = await this.engine.jsm.streams.purge(this.engine.names.eventsStream, {
        filter: this.engine.names.session(token!),
      });
      this.events = Math.max(0, this.events - r.purged);
    }
  }

  /**
   * One session's history. Bounded in time: a connection's later frames wait for its replay
   * (an adapter's events behind its outbox's position query), so a replay that never ended
   * would stop that connection's events for good while commands still reached it.
   */
  async replay(session: string, after?: Position): Promise<Replay> {
    const { names } = this.engine;
    const token = sessionToken(session);
    // The quick manager: a request no stream leader took is not answered by the next one.
    const info = await this.engine.quick.jsm.streams.info(names.eventsStream, {
      subjects_filter: names.session(token),
    });
    const held = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    if (held === 0) return { items: [] };
    const consumer = await placed(() =>
      ephemeral(this.engine, names.eventsStream, names.session(token), undefined, DeliverPolicy.All),
    );
    const rows: Row[] = [];
    let stall: NodeJS.Timeout | undefined;
    try {
      const batch = await consumer.fetch({ max_messages: held, expires: REPLAY_FETCH_MS });
      // The client library stops a fetch whose server went quiet, except when this node's
      // connection was to that server: after the reconnect it asks the consumer's dead host for
      // its state without end. Silent for longer than the server lets it last, it is given up here.
      const quiet = () => {
        clearTimeout(stall);
        stall = setTimeout(() => batch.stop(new Error(REPLAY_STALLED)), REPLAY_STALL_MS);
      };
      quiet();
      for await (const m of batch) {
        quiet();
        const raw = m.string();
        const pos = position(m.headers);
        rows.push(pos ? { arrival: m.seq, pos, raw } : { arrival: m.seq, raw });
        if (m.info.pending === 0) break;
      }
    } finally {
      clearTimeout(stall);
      void consumer.delete().catch(() => {});
    }
    return orderRows(rows, after, this.bufferCap);
  }

  /** From the session index (every node's writes, as this node heard them). */
  holdsFrom(session: string, pos: Position): boolean {
    const top = this.index.get(sessionToken(session))?.top;
    return top !== undefined && !before(top, pos);
  }

  sessionIds(): string[] {
    return [...this.index.values()].sort((a, b) => a.last - b.last).map((e) => e.session);
  }

  counts(): { sessions: number; events: number } {
    return { sessions: this.index.size, events: this.events };
  }

  /** Rings evict without telling anyone: the stream's own count corrects the running one. */
  async recount(): Promise<void> {
    this.events = (await this.engine.jsm.streams.info(this.engine.names.eventsStream)).state.messages;
  }

  stop(): void {
    this.stopped = true;
    this.feed?.stop();
  }
}
