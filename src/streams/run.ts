// The adapter core: sources merged, routed per session, stepped, logged, performed. This file
// owns the bus (the only Subjects) and the only subscribe.
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import {
  EMPTY,
  Subject,
  filter,
  from,
  ignoreElements,
  interval,
  map,
  merge,
  mergeAll,
  mergeMap,
  share,
  tap,
  timer,
  type Observable,
  type Subscription,
} from 'rxjs';
import { SteeringError, agentEvent, newId, type AepCommand, type AepEvent } from '../protocol/index.js';
import { ActorHost, type Effect, type SessionItem, type SessionView, type StepResult } from './actor-host.js';
import { startHookEndpoint, type HookArrival, type HookEndpoint } from './hook-endpoint.js';
import type { InspectionOption } from './inspect.js';
import {
  archivedGenerations,
  headerGeneration,
  openEventLog,
  readEventLog,
  segmentPath,
  siblingPath,
  type LogRecord,
  type SyncFn,
  type WriteFn,
} from './log.js';
import { Outbox, readOutboxState, writeFileDurably } from './outbox.js';
import type { RelayLink } from './relay-link.js';
import { LogReplay } from './replay.js';
import { steer } from './route.js';
import { readSnapshot, snapshotText } from './snapshot.js';
import { fromCommands, fromHookArrivals, type HookItem, type UnreadableHook } from './sources.js';
import type { Controller, InputTransport, VendorSurface } from './surface.js';
import { forwardThrough, fromTransportFacts, throughTransport } from './input-transport.js';
// D30 native lanes: their plumbing is lanes/attach.ts; the lines marked `lanes:` below use it.
import { fromLaneFacts, isLaneEffect, laneHostOptions, openLanes, throughLanes } from '../lanes/attach.js';
import type { NativeLane } from '../lanes/lane.js';

export interface AdapterOptions {
  surface: VendorSurface;
  /** Hook port on 127.0.0.1 (D15); 0 picks a free one. */
  port: number;
  /** Per-install secret path segment (D15). */
  secret: string;
  /** The adapter's own event log (D11). */
  logPath: string;
  /** AEP_INSTRUCT (D5). */
  instruct: boolean;
  /** The vendor's send_input gate (e.g. AEP_CLINE_HUB_CONTROL, D28); needs `transport`. */
  sendInput?: boolean;
  /** The vendor's user-plane channel that send_input goes through (D28, D29). */
  transport?: InputTransport;
  /** The vendor's control gate for the surface's `controls` (AEP_OPENHANDS_CONTROL); needs `controller`. */
  control?: boolean;
  /** Carries the surface's `controls` out on the vendor's API. */
  controller?: Controller;
  /** D30: the vendor's native lanes (Codex app-server), beside the hook lane; closed with the adapter. */
  lanes?: NativeLane[];
  /** AEP_ATTENTION_TIMEOUT_MS (D14); the surface's default otherwise. */
  attentionTimeoutMs?: number;
  /** AEP_INSTRUCT_TTL_MS (D10); off when absent. */
  ttlMs?: number;
  /** AEP_RESUME_WINDOW_MS (D25); the surface's otherwise. */
  resumeWindowMs?: number;
  /** D27: a delivering reply also tells the user, where the vendor has a field for it (default true). */
  notice?: boolean;
  /** Host segment of event sources. */
  host?: string;
  relay?: RelayLink;
  inspect?: InspectionOption;
  /** Per-hook budget before the neutral reply goes out (D15). */
  hookBudgetMs?: number;
  /**
   * Arrivals that come from elsewhere than the hook endpoint (a bridge's event socket), classified
   * by the same vendor table and stepped through the same sessions.
   */
  arrivals$?: Observable<HookArrival>;
  /** Extra `GET /healthz` fields. */
  health?: () => Record<string, unknown>;
  /** fsync each log batch (default true). */
  fsync?: boolean;
  /** How a log batch is made durable (default `fs.fsync`); tests slow it down to check D4/D12 ordering. */
  logSync?: SyncFn;
  /** How log bytes reach the file (default `fs.writeSync`); the fault suite injects ENOSPC here. */
  logWrite?: WriteFn;
  /** Active log size that triggers a snapshot and a new segment (D24; default 16 MiB). */
  segmentBytes?: number;
  /** Archived segments kept after a snapshot covers them (default 2; Infinity keeps all). */
  keepSegments?: number;
  /** How often a degraded adapter probes the log (D22; default 500 ms). */
  probeMs?: number;
  onError?: (e: SteeringError) => void;
}

export interface AdapterHandle {
  port: number;
  hookUrl: string;
  /** Everything the adapter emits (re-acks included), live. */
  events$: Observable<AepEvent>;
  sessions(): SessionView[];
  /** Injects a command as if the relay had routed it. */
  command(c: AepCommand): void;
  /** `degraded` while log appends fail (D22). */
  health(): 'ok' | 'degraded';
  /** Frames the outbox wrote, by kind (D23, D24). */
  outboxCounters(): Outbox['counters'];
  close(): Promise<void>;
}

/**
 * `hello.capabilities.control.accepts`: `control.attention.respond` only while a held loop is
 * enabled (VS Code and Hermes hold nothing until their opt-in gate is on), the steering verb only
 * with AEP_INSTRUCT (D5); the surface's vendor-API controls only with its control gate on.
 */
export const acceptsFor = (
  surface: Pick<VendorSurface, 'steeringType' | 'holds' | 'sendInput' | 'controls' | 'cancels' | 'approvals'>,
  instruct: boolean,
  sendInput = false,
  control = false,
): string[] => [
  ...((surface.holds === true && surface.controls?.includes('control.attention.respond') !== true) ||
  (sendInput && surface.approvals === true)
    ? ['control.attention.respond']
    : []),
  ...(control ? (surface.controls ?? []) : []),
  ...(instruct && surface.steeringType !== surface.sendInput?.type ? [surface.steeringType] : []),
  ...(sendInput && surface.cancels === true ? ['control.cancel'] : []),
  ...(sendInput && surface.sendInput !== undefined ? [surface.sendInput.type] : []),
];

const reportToStderr = (e: SteeringError): void => {
  process.stderr.write(`aep-steer: ${e.code}: ${e.message}\n`);
};

type Out = { kind: 'event'; e: AepEvent; live: boolean } | { kind: 'feedback'; item: SessionItem };

export const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
export const DEFAULT_KEEP_SEGMENTS = 2;

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
  'approval.requested',
  'approval.resolved',
  'transport.lost',
  'hold.closed',
  ...['lane.reach', 'lane.answered', 'lane.delivered', 'lane.turn', 'lane.withdrawn'], // lanes
]);

/** A reply that hands over no instructions (nothing to confirm, D9): it needs nothing durable first. */
const answersAtOnce = (f: Effect): boolean => f.kind === 'reply' && !f.confirm;

export async function startAdapter(opts: AdapterOptions): Promise<AdapterHandle> {
  const onError = opts.onError ?? reportToStderr;
  const lanes = opts.lanes ?? []; // lanes
  const laneOpts = laneHostOptions(lanes); // lanes
  const snapPath = siblingPath(opts.logPath, 'snapshot');
  const listDir = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  const snap = readSnapshot(snapPath, onError);
  // A crash between a snapshot and its rotation leaves the covered file active: archive it now.
  if (snap && existsSync(opts.logPath) && headerGeneration(opts.logPath) < snap.generation) {
    renameSync(opts.logPath, segmentPath(opts.logPath, headerGeneration(opts.logPath)));
  }
  const host = new ActorHost({
    surface: opts.surface,
    instruct: opts.instruct,
    onError,
    ...(opts.sendInput === true && opts.transport
      ? { sendInput: true, inputReady: () => opts.transport?.ready() ?? false }
      : {}),
    ...(opts.control === true && opts.controller
      ? { control: true, controlCheck: opts.controller.check.bind(opts.controller) }
      : {}),
    ...(opts.attentionTimeoutMs === undefined ? {} : { attentionTimeoutMs: opts.attentionTimeoutMs }),
    ...(opts.resumeWindowMs === undefined ? {} : { resumeWindowMs: opts.resumeWindowMs }),
    ...(opts.notice === undefined ? {} : { notice: opts.notice }),
    ...(opts.host === undefined ? {} : { host: opts.host }),
    ...(opts.inspect === undefined ? {} : { inspect: opts.inspect }),
    ...(laneOpts === undefined ? {} : { lanes: laneOpts }), // lanes
  });
  let refusedAt: SteeringError | undefined;
  // Start = the snapshot plus the active segment (D24); with no snapshot, the whole history.
  // Records are replayed as they are read, oldest segment first, never all held at once.
  const archived = archivedGenerations(opts.logPath, listDir);
  const replay = new LogReplay(host);
  const replayRecord = (r: LogRecord, _end: number, line: string) => replay.record(r, line);
  if (snap) {
    host.importState(snap.host);
  } else {
    const active = existsSync(opts.logPath) ? headerGeneration(opts.logPath) : 0;
    for (const g of archived) if (g < active) readEventLog(segmentPath(opts.logPath, g), replayRecord);
  }
  const { log, existing } = openEventLog(opts.logPath, {
    ...(opts.fsync === undefined ? {} : { fsync: opts.fsync }),
    ...(opts.logSync === undefined ? {} : { sync: opts.logSync }),
    ...(opts.logWrite === undefined ? {} : { write: opts.logWrite }),
    generation: snap?.generation ?? 0,
    onRecord: replayRecord,
    // D22: the sessions go back to what the log holds before anyone hears of the refusal.
    onRefused: (err) => {
      host.rollback();
      refusedAt = err;
    },
  });
  for (const p of existing.problems) onError(p);
  const outbox = new Outbox(
    {
      log,
      vendor: opts.surface.token,
      statePath: siblingPath(opts.logPath, 'relay'),
      onError,
      oldestGeneration: archived[0] ?? log.generation,
      ...(opts.relay ? { link: opts.relay } : {}),
    },
    readOutboxState(siblingPath(opts.logPath, 'relay')),
  );
  if (snap) outbox.restoreLast(snap.last);
  for (const e of replay.summary().lastEvents.values()) outbox.restore(e);
  outbox.start();

  let endpoint: HookEndpoint;
  try {
    endpoint = await startHookEndpoint({
      port: opts.port,
      secret: opts.secret,
      neutral: () => opts.surface.neutralReply(undefined),
      onError,
      status: () => ({
        vendor: opts.surface.token,
        instruct: opts.instruct,
        sendInput: opts.sendInput === true && opts.transport !== undefined,
        sessions: host.sessionKeys().length,
      }),
      ...(opts.hookBudgetMs === undefined ? {} : { budgetMs: opts.hookBudgetMs }),
      ...(opts.health === undefined ? {} : { health: opts.health }),
      ...(lanes.length === 0 ? {} : { openLanes: () => openLanes(lanes) }), // lanes
    });
  } catch (err) {
    // PORT_IN_USE and the like: leave nothing open behind.
    host.stop();
    void log.close();
    throw err;
  }

  let closed = false;
  const events$ = new Subject<AepEvent>();
  const feedback$ = new Subject<SessionItem>();
  const injected$ = new Subject<AepCommand>();
  const arrivals = new Map<string, HookArrival>();
  const synced = opts.fsync ?? true;
  const segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
  const keepSegments = opts.keepSegments ?? DEFAULT_KEEP_SEGMENTS;

  // ---- D22: degraded while appends fail -------------------------------------------------
  let degraded = false;
  let probe: NodeJS.Timeout | undefined;
  const retry: SessionItem[] = [];
  const healthEvent = (status: 'ok' | 'degraded', at: number): AepEvent =>
    agentEvent(
      opts.surface.token,
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
                  'event log appends fail (disk full or unwritable); hooks get neutral replies and commands are not acknowledged until it recovers',
              },
      },
      opts.host,
    );
  function enterDegraded(): void {
    if (degraded) return;
    degraded = true;
    onError(refusedAt ?? new SteeringError('LOG_WRITE_FAILED', 'event log refused a write'));
    const e = healthEvent('degraded', Date.now());
    outbox.setHealth(e);
    events$.next(e);
    probe = setInterval(() => {
      if (log.idle() && log.probe(Date.now())) recovered();
    }, opts.probeMs ?? 500);
    probe.unref();
  }
  function recovered(): void {
    if (!degraded) return;
    degraded = false;
    clearInterval(probe);
    const e = healthEvent('ok', Date.now());
    outbox.setHealth(e);
    events$.next(e);
    // What could not be recorded is stepped again now, durably (D22).
    const again = retry.splice(0);
    queueMicrotask(() => {
      for (const item of again) feedback$.next(item);
    });
  }

  // ---- D24: snapshot, new segment, compaction --------------------------------------------
  let rotating = false;
  function maybeRotate(): void {
    if (rotating || log.end().offset < segmentBytes) return;
    rotating = true;
    setImmediate(() => {
      rotating = false;
      // Only between steps: with nothing pending the sessions are exactly what the log holds.
      if (degraded || closed || !log.idle() || log.end().offset < segmentBytes) return;
      try {
        writeFileDurably(snapPath, snapshotText(log.generation + 1, host.exportState(), outbox.lastEvents()));
        const gen = log.rotate();
        outbox.rotated(gen, log.end().offset);
        compact(gen);
      } catch (cause) {
        onError(
          new SteeringError(
            'LOG_WRITE_FAILED',
            `cannot snapshot the sessions into ${snapPath}; the log keeps growing until it can`,
            { cause },
          ),
        );
      }
    });
  }
  function compact(current: number): void {
    // The relay may still need segments it has not confirmed (D23); the rest go past the kept few.
    const needed = outbox.neededGeneration();
    for (const g of archivedGenerations(opts.logPath, listDir)) {
      if (g < current - keepSegments && g < needed) rmSync(segmentPath(opts.logPath, g), { force: true });
    }
  }

  const hookItems$ = (opts.arrivals$ ? merge(endpoint.arrivals$, opts.arrivals$) : endpoint.arrivals$).pipe(
    map((a) => {
      arrivals.set(a.id, a);
      return a;
    }),
    fromHookArrivals(opts.surface),
    share(),
  );
  const unreadable$ = hookItems$.pipe(filter((h: HookItem): h is UnreadableHook => h.kind === 'unreadable'));
  const readable$ = hookItems$.pipe(
    filter((h: HookItem): h is Exclude<HookItem, UnreadableHook> => h.kind !== 'unreadable'),
    tap(answerEarly),
  );
  const commands$ = merge(opts.relay?.commands$ ?? EMPTY, injected$).pipe(fromCommands(Date.now));
  const ttlMs = opts.ttlMs ?? 0;
  const windowMs = opts.resumeWindowMs ?? opts.surface.resumeWindowMs ?? 0;
  const tickEvery = Math.min(...[ttlMs, windowMs].filter((ms) => ms > 0), 1000);
  const ticks$: Observable<SessionItem> =
    ttlMs > 0 || windowMs > 0
      ? interval(Math.max(50, tickEvery)).pipe(
          mergeMap(() => {
            const at = Date.now();
            const items: SessionItem[] = [];
            for (const session of host.sessionKeys()) {
              const ctx = host.context(session);
              // Only sessions with something queued can expire anything (D10); only an ended one's window can pass (D25).
              if (ttlMs > 0 && (ctx?.queue.length ?? 0) > 0)
                items.push({ kind: 'input', session, input: { type: 'ttl.tick', at, ttlMs } });
              if (ctx?.resumeUntil !== undefined && at >= ctx.resumeUntil)
                items.push({ kind: 'input', session, input: { type: 'window.tick', at } });
            }
            return from(items);
          }),
        )
      : EMPTY;

  /**
   * D7–D8: a moment no instruction can fit gets the neutral reply before its step runs; the step
   * follows at once and logs it as usual. Its reply effect then finds no waiting arrival, which
   * for a neutral reply is nothing, and for a delivery would mean reply.failed and the
   * instructions back at the head of the queue (D9): an early answer can delay a delivery, never lose one.
   */
  function answerEarly(h: SessionItem & { kind: 'hook' }): void {
    if (!host.answersNeutrally(h)) return;
    const arrival = arrivals.get(h.hookId);
    arrivals.delete(h.hookId);
    void arrival?.respond(opts.surface.neutralReply(h.hook), false);
  }

  // What settled steps release reaches the sinks through these two Subjects, so a step costs no
  // Observable of its own: `released$` carries events and feedback once a step's records are
  // durable, `effects$` the few effects that run on as streams (holds, transports, controls).
  const released$ = new Subject<Out>();
  const effects$ = new Subject<Observable<SessionItem>>();
  const feedback = (item: SessionItem): void => released$.next({ kind: 'feedback', item });

  /** Starts an effect; for a steering reply, its outcome goes back to the session (D9). */
  function perform(effect: Effect, logged: boolean): void {
    if (isLaneEffect(effect)) return effects$.next(throughLanes(lanes, effect, logged, Date.now)); // lanes
    if (effect.kind === 'send' || effect.kind === 'cancel' || effect.kind === 'answer') {
      effects$.next(throughTransport(opts.transport, effect, logged, Date.now));
      return;
    }
    if (effect.kind === 'forward') {
      effects$.next(forwardThrough(opts.controller, effect, logged, Date.now));
      return;
    }
    const arrival = arrivals.get(effect.hookId);
    if (effect.kind === 'hold') {
      arrival?.hold(effect.timeoutMs);
      effects$.next(
        timer(effect.timeoutMs).pipe(
          map(
            (): SessionItem => ({
              kind: 'input',
              session: effect.session,
              input: { type: 'attention.timeout', at: Date.now(), requestId: effect.requestId },
            }),
          ),
        ),
      );
      // D34: the vendor closing the held hook ends the request at once; after our own reply the
      // close finds no hold and changes nothing.
      if (arrival) {
        effects$.next(
          from(arrival.closed).pipe(
            map(
              (): SessionItem => ({
                kind: 'input',
                session: effect.session,
                input: { type: 'hold.closed', at: Date.now(), hookId: effect.hookId },
              }),
            ),
          ),
        );
      }
      return;
    }
    arrivals.delete(effect.hookId);
    // D12: a reply with instructions goes out only once its journal record is durable.
    const reply = logged || !effect.confirm ? effect.reply : opts.surface.neutralReply(undefined);
    // Only a steering reply's outcome matters (D9); the others are written and left.
    const session = effect.confirm ? effect.session : undefined;
    const written = arrival ? arrival.respond(reply, session !== undefined) : Promise.resolve(false);
    if (session === undefined) return;
    void written.then((ok) =>
      feedback({
        kind: 'input',
        session,
        input: { type: ok && logged ? 'reply.written' : 'reply.failed', at: Date.now(), hookId: effect.hookId },
      }),
    );
  }

  /** A step whose records were refused emits nothing (D22): neutral replies, inputs kept for later. */
  function refusedStep(r: StepResult & { item?: SessionItem }): void {
    enterDegraded();
    if (r.item?.kind === 'input' && RETRIED_INPUTS.has(r.item.input.type)) retry.push(r.item);
    for (const f of r.effects) {
      // A send, forward, cancel or answer of a refused step never starts: its command was rolled back and is decided on retry.
      if (f.kind === 'send' || f.kind === 'forward' || f.kind === 'cancel' || f.kind === 'answer') continue;
      if (isLaneEffect(f)) continue; // lanes
      const arrival = arrivals.get(f.hookId);
      arrivals.delete(f.hookId);
      void arrival?.respond(opts.surface.neutralReply(undefined));
    }
  }

  /** A failure past the step (a sink or an effect that threw) is reported; the adapter goes on. */
  function guarded(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      onError(new SteeringError('EVENT_INVALID', `${what} failed: ${String(err)}`, { cause: err }));
    }
  }

  function settle(r: StepResult & { item?: SessionItem }): void {
    const logged: AepEvent[] = [];
    for (const x of r.records) if (x.k === 'ev') logged.push(x.e);
    const onDurable = (range: { gen: number; start: number; end: number }): void => {
      if (r.stepNo !== undefined) host.durable(r.stepNo);
      outbox.appended(logged, range);
      if (degraded) recovered();
      maybeRotate();
    };
    // A hook moment whose reply carries no instructions answers at once: nothing in that reply
    // must be durable first (only acks, D4, and steering replies, D12, must). Its records still
    // go to the log in step order with the next group commit, and its events wait for that.
    const early = r.item?.kind === 'hook' && synced ? r.effects.filter(answersAtOnce) : [];
    for (const f of early) perform(f, true);
    const release = (): void => {
      // After close the sinks are gone, as a stopped pipeline would leave them.
      if (closed) return;
      for (const e of r.events) released$.next({ kind: 'event', e, live: !logged.includes(e) });
      for (const f of r.effects) if (!early.includes(f)) perform(f, true);
    };
    // Without fsync a written batch is as durable as this log makes it, so the step settles at once.
    if (!synced) {
      try {
        onDurable(log.append(r.records));
      } catch {
        refusedStep(r);
        return;
      }
      release();
      return;
    }
    // Nothing leaves before the step's records are durable (D4 acks, D9/D12 replies, D22).
    // Commits settle in call order, so events keep the order their steps ran in.
    log.commit(r.records, { durable: onDurable }).then(
      () => guarded('releasing a step', release),
      () => guarded('refusing a step', () => refusedStep(r)),
    );
  }

  const recovered$ = from(host.recover(Date.now()));
  const stepped$ = steer(
    merge(
      readable$,
      commands$,
      feedback$,
      ticks$,
      fromTransportFacts(opts.transport, host, opts.sendInput === true),
      fromLaneFacts(lanes, host, hookItems$.pipe(filter((h) => h.kind !== 'unreadable')), onError), // lanes
    ),
    host,
  );
  const neutral$: Observable<never> = unreadable$.pipe(
    mergeMap((u) => {
      onError(u.error);
      arrivals.delete(u.arrival.id);
      return from(u.arrival.respond(opts.surface.neutralReply(undefined))).pipe(mergeMap(() => EMPTY));
    }),
  );
  const settled$: Observable<never> = merge(recovered$, stepped$).pipe(tap(settle), ignoreElements());
  const ongoing$: Observable<Out> = effects$.pipe(
    mergeAll(),
    map((item): Out => ({ kind: 'feedback', item })),
  );

  const subscription: Subscription = merge(settled$, released$, ongoing$, neutral$).subscribe({
    next: (o) => {
      if (o.kind === 'feedback') {
        feedback$.next(o.item);
        return;
      }
      // Logged events reach the relay from the log (D23); a re-ack is a copy of one, sent as is.
      if (o.live) outbox.sendLive(o.e);
      events$.next(o.e);
    },
    error: (err: unknown) =>
      onError(new SteeringError('EVENT_INVALID', `adapter pipeline stopped: ${String(err)}`, { cause: err })),
  });
  return {
    port: endpoint.port,
    hookUrl: endpoint.url,
    events$: events$.asObservable(),
    sessions: () => host.views(),
    command: (c) => injected$.next(c),
    health: () => (degraded ? 'degraded' : 'ok'),
    outboxCounters: () => outbox.counters,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(probe);
      await endpoint.close();
      subscription.unsubscribe();
      await Promise.all(lanes.map((l) => l.close().catch(() => undefined))); // lanes
      host.stop();
      outbox.close();
      await log.close();
      events$.complete();
      await opts.relay?.close();
    },
  };
}
