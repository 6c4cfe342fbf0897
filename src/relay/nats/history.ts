// Session history in the events stream. Each node keeps an index of the sessions (last arrival,
// highest position) fed by one ordered consumer on every session subject, which also brings the
// copies other nodes stored for live fan-out here. Replay reads one session's two rings with an
// ordered consumer and orders them as the SQLite store does.
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { interleaveByArrival, type Admission, type Position, type Replay } from '../store.js';
import { untilReady, type Engine } from './engine.js';
import { admissionId, sessionToken } from './subjects.js';

const NODE = 'Aep-Node';
const EPOCH = 'Aep-Epoch';
const SEQ = 'Aep-Seq';

const before = (a: Position, b: Position): boolean => a.epoch < b.epoch || (a.epoch === b.epoch && a.seq < b.seq);

interface Indexed {
  session: string;
  /** Stream sequence of the session's latest event (recency for eviction and replay-all). */
  last: number;
  /** Highest position held: the same position again is a redelivery (an adapter re-claiming). */
  top?: Position;
}

interface Row {
  arrival: number;
  pos?: Position;
  raw: string;
}

/** Orders one session's rows like the SQLite store: positions by `(epoch, seq)`, seq-less ones by arrival among them. */
export function orderRows(rows: Row[], after: Position | undefined, bufferCap: number): Replay {
  const from = after ?? { epoch: -1, seq: -1 };
  const all = rows.filter((r) => r.pos !== undefined).sort((a, b) => (before(a.pos!, b.pos!) ? -1 : before(b.pos!, a.pos!) ? 1 : a.arrival - b.arrival));
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

export class NatsHistory {
  private readonly index = new Map<string, Indexed>();
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
  ) {}

  /** Reads the index (each subject's last event), then follows every new event. */
  async start(): Promise<void> {
    const { jsm, js, names } = this.engine;
    const info = await untilReady(() => jsm.streams.info(names.eventsStream));
    this.events = info.state.messages;
    const upTo = info.state.last_seq;
    const consumer = await js.consumers.get(names.eventsStream, { filter_subjects: names.allEvents, deliver_policy: DeliverPolicy.LastPerSubject });
    const messages = await untilReady(() => consumer.consume());
    let ready!: () => void;
    const indexed = new Promise<void>((resolve) => (ready = resolve));
    if (upTo === 0 || info.state.messages === 0) ready();
    void (async () => {
      for await (const m of messages) {
        if (this.stopped) break;
        this.see(m, m.seq <= upTo);
        if (m.seq >= upTo) ready();
      }
    })().catch((err: Error) => this.report(err));
    this.stopFeed = () => messages.stop();
    await indexed;
  }

  private stopFeed: () => void = () => {};

  private see(m: JsMsg, old: boolean): void {
    const token = m.subject.split('.')[2]!;
    // Indexed, counted and fanned out when this node stored it.
    if (!old && m.headers?.get(NODE) === this.node) return;
    const raw = m.string();
    let session = this.index.get(token)?.session;
    if (session === undefined) session = (JSON.parse(raw) as { session: string }).session;
    this.note(token, session, m.seq, position(m.headers));
    if (!old) {
      this.events += 1;
      this.remote(raw);
    }
  }

  private note(token: string, session: string, seq: number, pos: Position | undefined): void {
    const entry = this.index.get(token) ?? { session, last: 0 };
    entry.last = Math.max(entry.last, seq);
    if (pos && (entry.top === undefined || before(entry.top, pos))) entry.top = pos;
    this.index.delete(token);
    this.index.set(token, entry);
  }

  /** Stores new events in order; a redelivery (same `(source, id)` within the window, or the session's top position again) is not stored and `duplicates` gets it. */
  async admitAll(list: readonly Admission[], duplicates: (a: Admission) => void): Promise<boolean[]> {
    const { js, names } = this.engine;
    const acks = list.map((a) => {
      const token = sessionToken(a.session);
      const positioned = a.epoch !== undefined || a.seq !== undefined;
      const pos = positioned ? { epoch: a.epoch ?? 0, seq: a.seq ?? 0 } : undefined;
      // The claim-renewing redelivery of a session's last event, past the dedupe window.
      const top = this.index.get(token)?.top;
      if (pos && top && top.epoch === pos.epoch && top.seq === pos.seq) return { a, token, pos, ack: undefined };
      const h = headers();
      h.set(NODE, this.node);
      if (pos) {
        h.set(EPOCH, String(pos.epoch));
        h.set(SEQ, String(pos.seq));
        // Later admissions in this batch see it at once (the ack comes later).
        const entry = this.index.get(token);
        if (entry) entry.top = entry.top === undefined || before(entry.top, pos) ? pos : entry.top;
      }
      return { a, token, pos, ack: js.publish(names.events(token, positioned), a.raw, { msgID: admissionId(a.source, a.id), headers: h }) };
    });
    const out: boolean[] = [];
    for (const x of acks) {
      const ack = x.ack === undefined ? undefined : await x.ack;
      const fresh = ack !== undefined && !ack.duplicate;
      if (fresh) {
        this.events += 1;
        const isNew = !this.index.has(x.token);
        this.note(x.token, x.a.session, ack.seq, x.pos);
        if (isNew) await this.evictBeyondCap();
      } else duplicates(x.a);
      out.push(fresh);
    }
    return out;
  }

  /** Beyond the session cap the least recently written session is purged (every node's index learns of it on replay). */
  private async evictBeyondCap(): Promise<void> {
    while (this.index.size > this.sessionCap) {
      const [token] = this.index.keys();
      this.index.delete(token!);
      const r = await this.engine.jsm.streams.purge(this.engine.names.eventsStream, { filter: this.engine.names.session(token!) });
      this.events = Math.max(0, this.events - r.purged);
    }
  }

  async replay(session: string, after?: Position): Promise<Replay> {
    const { js, jsm, names } = this.engine;
    const token = sessionToken(session);
    const info = await jsm.streams.info(names.eventsStream, { subjects_filter: names.session(token) });
    const held = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    if (held === 0) return { items: [] };
    const consumer = await js.consumers.get(names.eventsStream, { filter_subjects: names.session(token) });
    const rows: Row[] = [];
    const batch = await consumer.fetch({ max_messages: held, expires: 2000 });
    for await (const m of batch) {
      const raw = m.string();
      const pos = position(m.headers);
      rows.push(pos ? { arrival: m.seq, pos, raw } : { arrival: m.seq, raw });
      if (m.info.pending === 0) break;
    }
    return orderRows(rows, after, this.bufferCap);
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
    this.stopFeed();
  }
}
