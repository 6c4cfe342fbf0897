// The event log's life (D11, D22–D24), one place: the sessions start from the snapshot plus the
// segments after it; each step's records are committed before anything of the step leaves; a
// refused append makes the adapter degraded until a probe write succeeds; a full segment is
// snapshotted, rotated and the segments nobody needs are removed. The outbox, the relay's
// reader of this log (D23), is opened and fed here too.
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { SteeringError, agentEvent, newId, type AepEvent } from '../protocol/index.js';
import { signLogHead } from '../protocol/chain.js';
import { ensureSigningKey } from '../protocol/key-file.js';
import type { ActorHost } from './actor-host.js';
import type { HeadSigner } from './log-format.js';
import type { SessionItem, StepResult } from './step-types.js';
import {
  archivedGenerations,
  headerGeneration,
  openEventLog,
  readEventLog,
  segmentPath,
  siblingPath,
  type EventLog,
  type LogRecord,
  type SyncFn,
  type WriteFn,
} from './log.js';
import { Outbox, readOutboxState, writeFileDurably } from './outbox.js';
import type { RelayLink } from './relay-link.js';
import { LogReplay } from './replay.js';
import { readSnapshot, snapshotText } from './snapshot.js';

const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const DEFAULT_KEEP_SEGMENTS = 2;

/** Inputs worth stepping again once the log takes appends (D22); ticks recur on their own. */
const RETRIED_INPUTS = new Set([
  'reply.written',
  'reply.failed',
  'attention.timeout',
  'restart.recovered',
  'input.sent',
  'input.failed',
  'input.consumed',
  'forward.settled',
  'cancel.answered',
  'withdraw.answered',
  'approval.requested',
  'approval.resolved',
  'transport.lost',
  'hold.closed',
  // D30: what the native lanes answered and observed.
  'lane.reach',
  'lane.answered',
  'lane.delivered',
  'lane.turn',
  'lane.withdrawn',
]);

export interface JournalOptions {
  /** The adapter's own event log (D11). */
  logPath: string;
  /** D47: the adapter's Ed25519 key file, made there if absent; it signs each generation's head. */
  signingKey?: string;
  /** The vendor token: the source of health events and the outbox's claims. */
  vendor: string;
  /** Host segment of event sources. */
  host?: string;
  relay?: RelayLink;
  /** fsync each log batch (default true). */
  fsync?: boolean;
  sync?: SyncFn;
  write?: WriteFn;
  lazyMs?: number;
  /** Active log size that triggers a snapshot and a new segment (D24). */
  segmentBytes?: number;
  /** Archived segments kept after a snapshot covers them. */
  keepSegments?: number;
  /** How often a degraded adapter probes the log (D22). */
  probeMs?: number;
  onError: (e: SteeringError) => void;
  /** An `agent.health` event: the log went degraded or recovered (D22). The relay has it already. */
  onHealth: (e: AepEvent) => void;
  /** Inputs a refused step could not record, to be stepped again now that the log takes appends. */
  onRetry: (items: SessionItem[]) => void;
}

const healthEvent = (vendor: string, host: string | undefined, status: 'ok' | 'degraded', at: number): AepEvent =>
  agentEvent(
    vendor,
    {
      type: 'agent.health',
      at,
      id: newId(at),
      severity: status === 'ok' ? 'info' : 'warning',
      capture: 'redacted',
      data:
        status === 'ok'
          ? { status, detail: 'event log appends succeed again; steering resumed' }
          : {
              status,
              detail:
                'event log appends fail (disk full or unwritable); hooks get neutral replies and commands are ' +
                'not acknowledged until it recovers',
            },
    },
    host,
  );

export class Journal {
  readonly outbox: Outbox;
  /** Whether a commit waits for fsync: without it a written batch is as durable as it gets. */
  readonly synced: boolean;
  private readonly log: EventLog;
  private readonly snapPath: string;
  private readonly segmentBytes: number;
  private readonly keepSegments: number;
  private refusedAt: SteeringError | undefined;
  private degradedNow = false;
  private probe: NodeJS.Timeout | undefined;
  private readonly retry: SessionItem[] = [];
  private rotating = false;
  private closed = false;

  /**
   * Start = the snapshot plus the active segment (D24); with no snapshot, the whole history.
   * Records are replayed into `host` as they are read, oldest segment first, never all held at once.
   */
  constructor(
    private readonly opts: JournalOptions,
    private readonly host: ActorHost,
  ) {
    const { logPath, onError } = opts;
    this.synced = opts.fsync ?? true;
    this.segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.keepSegments = opts.keepSegments ?? DEFAULT_KEEP_SEGMENTS;
    this.snapPath = siblingPath(logPath, 'snapshot');
    const snap = readSnapshot(this.snapPath, onError);
    // A crash between a snapshot and its rotation leaves the covered file active: archive it now.
    // A headerless file whose segment is archived already is no such file: an older version
    // left it so when the disk refused the next generation's header after the snapshot. It holds
    // what came after the snapshot, so it is replayed as that generation, and segment 0 is kept.
    let headerless: number | undefined;
    if (snap && existsSync(logPath) && headerGeneration(logPath) < snap.generation) {
      const gen = headerGeneration(logPath);
      if (gen === 0 && existsSync(segmentPath(logPath, 0))) headerless = snap.generation;
      else renameSync(logPath, segmentPath(logPath, gen));
    }
    const archived = archivedGenerations(logPath, listDir);
    const replay = new LogReplay(host);
    const replayRecord = (r: LogRecord, _end: number, line: string) => replay.record(r, line);
    if (snap) {
      host.importState(snap.host);
    } else {
      const active = existsSync(logPath) ? headerGeneration(logPath) : 0;
      for (const g of archived) if (g < active) readEventLog(segmentPath(logPath, g), replayRecord);
    }
    const { log, existing } = openEventLog(logPath, {
      ...(opts.fsync === undefined ? {} : { fsync: opts.fsync }),
      ...(opts.sync === undefined ? {} : { sync: opts.sync }),
      ...(opts.write === undefined ? {} : { write: opts.write }),
      ...(opts.lazyMs === undefined ? {} : { lazyMs: opts.lazyMs }),
      generation: snap?.generation ?? 0,
      ...(headerless === undefined ? {} : { headerless }),
      onRecord: replayRecord,
      ...headSigner(opts.signingKey),
      // D22: the sessions go back to what the log holds before anyone hears of the refusal.
      onRefused: (err) => {
        host.rollback();
        this.refusedAt = err;
      },
    });
    this.log = log;
    for (const p of existing.problems) onError(p);
    this.outbox = new Outbox(
      {
        log,
        vendor: opts.vendor,
        statePath: siblingPath(logPath, 'relay'),
        onError,
        oldestGeneration: archived[0] ?? log.generation,
        ...(opts.relay ? { link: opts.relay } : {}),
      },
      readOutboxState(siblingPath(logPath, 'relay')),
    );
    if (snap) this.outbox.restoreLast(snap.last);
    for (const e of replay.summary().lastEvents.values()) this.outbox.restore(e);
    this.outbox.start();
  }

  /** `degraded` while log appends fail (D22). */
  get degraded(): boolean {
    return this.degradedNow;
  }

  /**
   * Makes a step's records durable, then `release`s it; `refuse` if the log refused them.
   * Commits settle in call order, so events keep the order their steps ran in. `lazy`: only the
   * step's events wait for it, so it may share a later fsync (log.ts, LAZY_SYNC_MS).
   */
  commit(r: StepResult, release: (logged: readonly AepEvent[]) => void, refuse: () => void, lazy = false): void {
    const logged: AepEvent[] = [];
    for (const x of r.records) if (x.k === 'ev') logged.push(x.e);
    const onDurable = (range: { gen: number; start: number; end: number }): void => {
      if (r.stepNo !== undefined) this.host.durable(r.stepNo);
      this.outbox.appended(logged, range);
      if (this.degradedNow) this.recovered();
      this.maybeRotate();
    };
    if (!this.synced) {
      try {
        onDurable(this.log.append(r.records));
      } catch {
        refuse();
        return;
      }
      release(logged);
      return;
    }
    this.log.commit(r.records, { durable: onDurable, lazy }).then(
      () => this.guarded('releasing a step', () => release(logged)),
      () => this.guarded('refusing a step', refuse),
    );
  }

  /** A step whose records were refused: the adapter is degraded (D22) and its input kept for later. */
  refused(item: SessionItem | undefined): void {
    this.enterDegraded();
    if (item?.kind === 'input' && RETRIED_INPUTS.has(item.input.type)) this.retry.push(item);
  }

  /** Leaves the log as a failed start finds it: nothing else was opened yet. */
  abandon(): void {
    void this.log.close();
  }

  /** No probe and no rotation from here on: the adapter is closing. */
  stop(): void {
    this.closed = true;
    clearInterval(this.probe);
  }

  async close(): Promise<void> {
    this.stop();
    this.outbox.close();
    await this.log.close();
  }

  /** A failure past the step (a sink or an effect that threw) is reported; the adapter goes on. */
  private guarded(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.onError(new SteeringError('INTERNAL', `${what} failed: ${String(err)}`, { cause: err }));
    }
  }

  private enterDegraded(): void {
    if (this.degradedNow) return;
    this.degradedNow = true;
    this.opts.onError(this.refusedAt ?? new SteeringError('LOG_WRITE_FAILED', 'event log refused a write'));
    this.announce('degraded');
    this.probe = setInterval(() => {
      if (this.log.idle() && this.log.probe(Date.now())) this.recovered();
    }, this.opts.probeMs ?? 500);
    this.probe.unref();
  }

  private recovered(): void {
    if (!this.degradedNow) return;
    this.degradedNow = false;
    clearInterval(this.probe);
    this.announce('ok');
    // What could not be recorded is stepped again now, durably (D22).
    const again = this.retry.splice(0);
    queueMicrotask(() => this.opts.onRetry(again));
  }

  private announce(status: 'ok' | 'degraded'): void {
    const e = healthEvent(this.opts.vendor, this.opts.host, status, Date.now());
    this.outbox.setHealth(e);
    this.opts.onHealth(e);
  }

  /** D24: a full segment becomes a snapshot and a new segment, between steps only. */
  private maybeRotate(): void {
    if (this.rotating || this.log.end().offset < this.segmentBytes) return;
    this.rotating = true;
    setImmediate(() => {
      this.rotating = false;
      // Only between steps: with nothing pending the sessions are exactly what the log holds.
      if (this.degradedNow || this.closed || !this.log.idle() || this.log.end().offset < this.segmentBytes) return;
      try {
        // The snapshot is written once the next generation's file is whole, and names it.
        const gen = this.log.rotate((next) =>
          writeFileDurably(this.snapPath, snapshotText(next, this.host.exportState(), this.outbox.lastEvents())),
        );
        this.outbox.rotated(gen, this.log.end().offset);
        this.compact(gen);
      } catch (cause) {
        this.opts.onError(
          new SteeringError(
            'LOG_WRITE_FAILED',
            `cannot snapshot the sessions into ${this.snapPath}; the log keeps growing until it can`,
            { cause },
          ),
        );
      }
    });
  }

  private compact(current: number): void {
    // The relay may still need segments it has not confirmed (D23); the rest go past the kept few.
    const needed = this.outbox.neededGeneration();
    for (const g of archivedGenerations(this.opts.logPath, listDir)) {
      if (g < current - this.keepSegments && g < needed) rmSync(segmentPath(this.opts.logPath, g), { force: true });
    }
  }
}

const listDir = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);

/** The log's header signer from the adapter's key file (D47); none without one. */
function headSigner(path: string | undefined): { signHead?: HeadSigner } {
  if (path === undefined) return {};
  const { privateKey, publicKey } = ensureSigningKey(path);
  return { signHead: (g, at) => signLogHead(g, at, privateKey, publicKey) };
}
