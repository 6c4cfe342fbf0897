// The store writes of what the relay took. Admissions are written as one batch per
// `GROUP_WRITE_MS` (events arriving on sockets meanwhile share it); every read of the store
// flushes first, so a replay never misses an event that was already fanned out, and an HTTP
// ingest or a command flushes its own batch at once. D38: a write the store did not confirm is
// refused back to each sender still connected, which sends it again.
import type { AepEvent } from '../protocol/envelope.js';
import { andThen } from './maybe.js';
import type { EventClass } from './routing.js';
import { isStoreUnavailable, storeUnavailable } from './store-fault.js';
import type { Admission, FaultAwareStore, Maybe, Position } from './session-store.js';
import type { Peer } from './types.js';

const NOW = { now: true } as const;

/** What a sender is told of a command handed on before a write that then failed (D41). */
export const EARLY =
  'the command was handed to its target before the write failed, so whether it took effect is unknown; ' +
  'send it again with the same id, and its target answers with what it recorded';

/** The core's counters this part moves. */
interface Counted {
  ingested: number;
  duplicates: number;
  refused: number;
}

export class GroupWrite {
  private pending: Admission[] = [];
  /** Per pending admission, the connection that sent it: told `store-unavailable` if the write fails (D38). */
  private pendingFrom: (Peer | undefined)[] = [];
  private scheduled = false;
  /** D41: commands handed to their target before this write; a failed write says `outcome: unknown` for them. */
  private readonly early = new Set<string>();

  constructor(
    private readonly store: FaultAwareStore,
    private readonly counters: Counted,
    /** A failed deferred write is reported, never thrown into the event loop. */
    private readonly report: (err: Error) => void,
    /** D38: a refused positioned event holds back its session's later ones from its sender. */
    private readonly holdBack: (peer: Peer, session: string, pos: Position) => void,
  ) {}

  /** Queues one stored event (not agent-scoped) for the next write. */
  add(e: AepEvent, cls: EventClass, line: string, origin: Peer | undefined): void {
    const a: Admission = { session: e.session!, source: e.source, id: e.id, raw: line };
    if (cls === 'positioned') {
      a.epoch = e.epoch ?? 0;
      a.seq = e.seq!;
    }
    this.pending.push(a);
    this.pendingFrom.push(origin);
  }

  /** Sets the group write's timer for what is pending, unless it is set already. */
  schedule(): void {
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      const wait = this.store.groupWriteMs ?? 0;
      if (wait > 0) setTimeout(() => this.flushSoon(), wait);
      else setImmediate(() => this.flushSoon());
    }
  }

  /**
   * Writes pending admissions; returns how many were new (not redeliveries). `now`: a caller
   * waits on this write (a command to forward, a read), so a store that batches its writes
   * takes it at once. A POST's body does not: it joins the next batch (its group write).
   * `session`: that session's pending admissions only (a command's), the rest left pending.
   */
  flush(now = false, session?: string): Maybe<number> {
    if (this.pending.length === 0) {
      this.scheduled = false;
      return 0;
    }
    const { list, from } = session === undefined ? this.takeAll() : this.takeSession(session);
    const counted = (results: boolean[]): number => {
      let fresh = 0;
      for (const f of results) {
        if (f) fresh += 1;
        this.counters[f ? 'ingested' : 'duplicates'] += 1;
      }
      return fresh;
    };
    const refuse = (err: Error): never => {
      if (this.unavailableWrite(err)) this.refuseUnwritten(list, from, err);
      else this.tellEarly(list, from, err);
      throw err;
    };
    let written: Maybe<boolean[]>;
    try {
      written = this.store.admitAll(list, now ? NOW : undefined);
    } catch (err) {
      return refuse(err as Error);
    }
    return written instanceof Promise ? written.then(counted, refuse) : counted(written);
  }

  private takeAll(): { list: Admission[]; from: (Peer | undefined)[] } {
    const taken = { list: this.pending, from: this.pendingFrom };
    this.pending = [];
    this.pendingFrom = [];
    this.scheduled = false;
    return taken;
  }

  /**
   * A session's pending admissions, in arrival order, out of what is pending; the rest stays for
   * the group write, whose timer is still set. Replays are per session, so what other sessions
   * have pending need not be written first.
   */
  private takeSession(session: string): { list: Admission[]; from: (Peer | undefined)[] } {
    const list: Admission[] = [];
    const from: (Peer | undefined)[] = [];
    let kept = 0;
    for (let i = 0; i < this.pending.length; i += 1) {
      const a = this.pending[i]!;
      if (a.session === session) {
        list.push(a);
        from.push(this.pendingFrom[i]);
      } else {
        this.pending[kept] = a;
        this.pendingFrom[kept] = this.pendingFrom[i];
        kept += 1;
      }
    }
    this.pending.length = kept;
    this.pendingFrom.length = kept;
    if (kept === 0) this.scheduled = false;
    return { list, from };
  }

  /** A write the store could not make now (as opposed to a bug): its senders retry. */
  unavailableWrite(err: Error): boolean {
    return isStoreUnavailable(err) || this.store.unavailable?.() !== undefined;
  }

  /**
   * D38: a write the store did not confirm. Each sender still connected hears `store-unavailable`
   * for its events, so it sends them again (an adapter from its log, D23); what the store did
   * keep of the batch is deduped on the resend.
   */
  private refuseUnwritten(list: readonly Admission[], from: readonly (Peer | undefined)[], err: Error): void {
    const { code, detail } = storeUnavailable(err.message);
    for (const [i, a] of list.entries()) {
      const peer = from[i];
      if (peer === undefined) continue;
      if (a.seq !== undefined) this.holdBack(peer, a.session, { epoch: a.epoch ?? 0, seq: a.seq });
      this.counters.refused += 1;
      const early = this.early.delete(a.id);
      const frame = early
        ? { type: 'error', cause: a.id, code, outcome: 'unknown', detail: `${detail}: ${EARLY}` }
        : { type: 'error', cause: a.id, code, detail };
      peer.sendText(JSON.stringify(frame));
    }
  }

  /**
   * D41: any other failed write (a bug, a refusing trigger) still leaves the senders of commands
   * handed on before it not knowing: each is told, as for a store that cannot write.
   */
  private tellEarly(list: readonly Admission[], from: readonly (Peer | undefined)[], err: Error): void {
    const early = list.flatMap((a, i) => (this.early.has(a.id) ? [i] : []));
    if (early.length > 0)
      this.refuseUnwritten(
        early.map((i) => list[i]!),
        early.map((i) => from[i]),
        err,
      );
  }

  /** D41: `id`, a command in the pending write, was already handed to its target. */
  forwarded(id: string): void {
    this.early.add(id);
  }

  /** The write of a command handed on early ended (a failure was told already). */
  settled(id: string): void {
    this.early.delete(id);
  }

  /**
   * Runs `f` once what is pending is written; a failed write is reported and `f` does not run.
   * `ended` runs once the write ended, either way (after `f`, or after the failure was told).
   */
  afterFlush(f: () => void, now = false, session?: string, ended?: () => void): void {
    const settle = (): void => {
      ended?.();
    };
    try {
      const done = andThen(this.flush(now, session), f);
      if (done instanceof Promise)
        done.then(settle, (err: Error) => {
          this.report(err);
          settle();
        });
      else settle();
    } catch (err) {
      this.report(err as Error);
      settle();
    }
  }

  /** A read waits for what is pending; a failed write was told to its senders and is no reason to refuse the read. */
  flushForRead(): Maybe<number> {
    const failed = (err: Error): number => {
      this.report(err);
      return 0;
    };
    try {
      const f = this.flush(true);
      return f instanceof Promise ? f.catch(failed) : f;
    } catch (err) {
      return failed(err as Error);
    }
  }

  /** Flushes without a caller to tell: a failed write is reported. */
  flushSoon(): void {
    this.afterFlush(() => {});
  }
}
