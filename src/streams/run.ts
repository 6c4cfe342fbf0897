// The adapter core's bus: sources merged, routed per session, stepped (actor-host.ts), committed
// (journal.ts), performed. This file owns the only Subjects and the only subscribe.
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
import { SteeringError, type AepCommand, type AepEvent } from '../protocol/index.js';
import { ActorHost } from './actor-host.js';
import type { SessionView } from './session-record.js';
import type { Effect, SessionItem, StepResult } from './step-types.js';
import { startHookEndpoint, type HookArrival, type HookEndpoint } from './hook-endpoint.js';
import type { InspectionOption } from './inspect.js';
import { Journal } from './journal.js';
import type { SyncFn, WriteFn } from './log.js';
import type { Outbox } from './outbox.js';
import type { RelayLink } from './relay-link.js';
import { steer } from './route.js';
import { fromCommands, fromHookArrivals, type HookItem, type UnreadableHook } from './sources.js';
import type { Controller, InputTransport, VendorSurface } from './surface.js';
import { forwardThrough, fromTransportFacts, throughTransport } from './input-transport.js';
// D30 native lanes: their plumbing (facts in, effects out) is native-lanes.ts.
import { fromLaneFacts, isLaneEffect, laneHostOptions, openLanes, throughLanes } from './native-lanes.js';
import type { NativeLane } from './lane.js';

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
  /** D30: the vendor's native lanes (Codex app-server, `qwen serve`), beside the hook lane; closed with the adapter. */
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
  /** How long an answered moment's records may wait to share an fsync (default `LAZY_SYNC_MS`). */
  logLazyMs?: number;
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

/**
 * D7–D8: a reply that hands over no instructions (the neutral one the machine announced, or a
 * decision; nothing to confirm, D9) needs nothing durable first: it goes out as its step ends.
 */
const answersAtOnce = (f: Effect): boolean => f.kind === 'neutral' || (f.kind === 'reply' && !f.confirm);

export async function startAdapter(opts: AdapterOptions): Promise<AdapterHandle> {
  const onError = opts.onError ?? reportToStderr;
  const lanes = opts.lanes ?? [];
  const laneOpts = laneHostOptions(lanes);
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
    ...(laneOpts === undefined ? {} : { lanes: laneOpts }),
  });
  // Declared before the journal, whose health events and retried inputs go out through them.
  const events$ = new Subject<AepEvent>();
  const feedback$ = new Subject<SessionItem>();
  const journal = new Journal(
    {
      logPath: opts.logPath,
      vendor: opts.surface.token,
      onError,
      onHealth: (e) => events$.next(e),
      onRetry: (items) => {
        for (const item of items) feedback$.next(item);
      },
      ...(opts.host === undefined ? {} : { host: opts.host }),
      ...(opts.relay === undefined ? {} : { relay: opts.relay }),
      ...(opts.fsync === undefined ? {} : { fsync: opts.fsync }),
      ...(opts.logSync === undefined ? {} : { sync: opts.logSync }),
      ...(opts.logWrite === undefined ? {} : { write: opts.logWrite }),
      ...(opts.logLazyMs === undefined ? {} : { lazyMs: opts.logLazyMs }),
      ...(opts.segmentBytes === undefined ? {} : { segmentBytes: opts.segmentBytes }),
      ...(opts.keepSegments === undefined ? {} : { keepSegments: opts.keepSegments }),
      ...(opts.probeMs === undefined ? {} : { probeMs: opts.probeMs }),
    },
    host,
  );
  const outbox = journal.outbox;

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
      ...(lanes.length === 0 ? {} : { openLanes: () => openLanes(lanes) }),
    });
  } catch (err) {
    // PORT_IN_USE and the like: leave nothing open behind.
    host.stop();
    journal.abandon();
    throw err;
  }

  let closed = false;
  const injected$ = new Subject<AepCommand>();
  // One map of open hooks, the host's: the arrival waits there with what its steps read from it.
  const hooks = host.hooks;
  const hookItems$ = (opts.arrivals$ ? merge(endpoint.arrivals$, opts.arrivals$) : endpoint.arrivals$).pipe(
    map((a) => {
      hooks.arrived(a);
      return a;
    }),
    fromHookArrivals(opts.surface),
    share(),
  );
  const unreadable$ = hookItems$.pipe(filter((h: HookItem): h is UnreadableHook => h.kind === 'unreadable'));
  const readable$ = hookItems$.pipe(
    filter((h: HookItem): h is Exclude<HookItem, UnreadableHook> => h.kind !== 'unreadable'),
    map(answerEarly),
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
              // Only sessions with something queued can expire anything (D10); only an ended one's window can pass
              // (D25).
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
   * D7–D8: a moment the machine announces no instruction can fit is answered before its step runs,
   * by the open hook itself. The item carries that answer into the step, which takes it as decided
   * and logs it as usual. Only a neutral reply goes early: a delivery never does.
   */
  function answerEarly(h: SessionItem & { kind: 'hook' }): SessionItem & { kind: 'hook' } {
    if (!host.answersNeutrally(h)) return h;
    void hooks.take(h.hookId)?.neutral();
    return { ...h, answered: 'neutral' };
  }

  // What settled steps release reaches the sinks through these two Subjects, so a step costs no
  // Observable of its own: `released$` carries events and feedback once a step's records are
  // durable, `effects$` the few effects that run on as streams (holds, transports, controls).
  const released$ = new Subject<Out>();
  const effects$ = new Subject<Observable<SessionItem>>();
  const feedback = (item: SessionItem): void => released$.next({ kind: 'feedback', item });

  /** Starts an effect; for a steering reply, its outcome goes back to the session (D9). */
  function perform(effect: Effect, logged: boolean): void {
    if (isLaneEffect(effect)) {
      effects$.next(throughLanes(lanes, effect, logged, Date.now));
      return;
    }
    if (effect.kind === 'send' || effect.kind === 'cancel' || effect.kind === 'answer' || effect.kind === 'withdraw') {
      effects$.next(throughTransport(opts.transport, effect, logged, Date.now));
      return;
    }
    if (effect.kind === 'forward') {
      effects$.next(forwardThrough(opts.controller, effect, logged, Date.now));
      return;
    }
    if (effect.kind === 'neutral') {
      void hooks.take(effect.hookId)?.neutral();
      return;
    }
    if (effect.kind === 'hold') {
      const arrival = hooks.arrival(effect.hookId);
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
    const arrival = hooks.take(effect.hookId);
    // Only a steering reply's outcome matters (D9); the others are written and left.
    const session = effect.confirm ? effect.session : undefined;
    // D12: a reply with instructions goes out only once its journal record is durable.
    const written = !arrival
      ? Promise.resolve(false)
      : logged || !effect.confirm
        ? arrival.respond(effect.reply, session !== undefined)
        : arrival.neutral();
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
    journal.refused(r.item);
    for (const f of r.effects) {
      // A send, forward, cancel, answer or withdraw of a refused step never starts: its command was
      // rolled back and is decided on retry.
      if (
        f.kind === 'send' ||
        f.kind === 'forward' ||
        f.kind === 'cancel' ||
        f.kind === 'answer' ||
        f.kind === 'withdraw'
      )
        continue;
      if (isLaneEffect(f)) continue;
      void hooks.take(f.hookId)?.neutral();
    }
  }

  /** Nothing of a step leaves before its records are durable (D4 acks, D9/D12 replies, D22). */
  function settle(r: StepResult & { item?: SessionItem }): void {
    // A hook moment whose reply carries no instructions answers at once: nothing in that reply
    // must be durable first (only acks, D4, and steering replies, D12, must). Its records still
    // go to the log in step order with the next group commit, and its events wait for that.
    const early = r.item?.kind === 'hook' && journal.synced ? r.effects.filter(answersAtOnce) : [];
    for (const f of early) perform(f, true);
    const release = (logged: readonly AepEvent[]): void => {
      // After close the sinks are gone, as a stopped pipeline would leave them.
      if (closed) return;
      for (const e of r.events) released$.next({ kind: 'event', e, live: !logged.includes(e) });
      for (const f of r.effects) if (!early.includes(f)) perform(f, true);
    };
    // Answered already and nothing else to do: only its events wait, so its fsync may be shared.
    const lazy = early.length > 0 && early.length === r.effects.length;
    journal.commit(r, release, () => refusedStep(r), lazy);
  }

  const recovered$ = from(host.recover(Date.now()));
  const stepped$ = steer(
    merge(
      readable$,
      commands$,
      feedback$,
      ticks$,
      fromTransportFacts(opts.transport, host, opts.sendInput === true),
      fromLaneFacts(lanes, host, hookItems$.pipe(filter((h) => h.kind !== 'unreadable')), onError),
    ),
    host,
  );
  const neutral$: Observable<never> = unreadable$.pipe(
    mergeMap((u) => {
      onError(u.error);
      hooks.take(u.arrival.id);
      return from(u.arrival.neutral()).pipe(mergeMap(() => EMPTY));
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
      onError(new SteeringError('INTERNAL', `adapter pipeline stopped: ${String(err)}`, { cause: err })),
  });
  return {
    port: endpoint.port,
    hookUrl: endpoint.url,
    events$: events$.asObservable(),
    sessions: () => host.views(),
    command: (c) => injected$.next(c),
    health: () => (journal.degraded ? 'degraded' : 'ok'),
    outboxCounters: () => outbox.counters,
    async close() {
      if (closed) return;
      closed = true;
      journal.stop();
      await endpoint.close();
      subscription.unsubscribe();
      await Promise.all(lanes.map((l) => l.close().catch(() => undefined)));
      host.stop();
      await journal.close();
      events$.complete();
      await opts.relay?.close();
    },
  };
}
