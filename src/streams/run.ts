// The adapter core's bus: sources merged, routed per session, stepped (actor-host.ts), committed
// (journal.ts), performed (perform.ts). This file owns the only Subjects and the only subscribe.
import {
  EMPTY,
  Subject,
  filter,
  from,
  ignoreElements,
  map,
  merge,
  mergeAll,
  mergeMap,
  share,
  tap,
  type Observable,
  type Subscription,
} from 'rxjs';
import { SteeringError, type AepCommand, type AepEvent } from '../protocol/index.js';
import { ActorHost, type HostOptions } from './actor-host.js';
import type { SessionView } from './session-record.js';
import type { SessionItem } from './step-types.js';
import { startHookEndpoint, type HookArrival, type HookEndpoint, type HookEndpointOptions } from './hook-endpoint.js';
import type { InspectionOption } from './inspect.js';
import { Journal, type JournalOptions } from './journal.js';
import type { SyncFn, WriteFn } from './log.js';
import type { Outbox } from './outbox.js';
import type { RelayLink } from './relay-link.js';
import { steer } from './route.js';
import { fromCommands, fromHookArrivals, type HookItem, type UnreadableHook } from './sources.js';
import { laterObservations } from './later.js';
import type { VendorSurface } from './surface.js';
import { performer, type Out } from './perform.js';
import { sessionTicks } from './ticks.js';
// Lanes, every way in beside the hooks: their plumbing (facts in, effects out) is lanes.ts.
import { fromLaneFacts, laneHostOptions, laneStarts, openLanes } from './lanes.js';
import { channelOf, steers, type Lane } from './lane.js';
import { closeHome, homeOpened, HomeSession, homeSessionOf } from './home.js';
import type { Spawner } from './spawner.js';

export interface AdapterOptions {
  surface: VendorSurface;
  /** Hook port on 127.0.0.1 (D15); 0 picks a free one. */
  port: number;
  /** Per-install secret path segment (D15). */
  secret: string;
  /** The adapter's own event log (D11). */
  logPath: string;
  /** D47: the adapter's Ed25519 key file, which signs the head each generation of its log starts from. */
  signingKey?: string;
  /** AEP_INSTRUCT (D5). */
  instruct: boolean;
  /** The vendor's send_input gate (e.g. AEP_CLINE_HUB_CONTROL, D28); needs a channel among `lanes`. */
  sendInput?: boolean;
  /** The vendor's control gate for the surface's `controls` (AEP_OPENHANDS_CONTROL); needs a channel that performs them. */
  control?: boolean;
  /**
   * The vendor's lanes beside the hook lane (D28–D33): the ones that steer turns (Codex app-server,
   * `qwen serve`, Claude Code stream-json) and its user-plane channel (the Cline hub, the OpenHands
   * agent server). Closed with the adapter.
   */
  lanes?: Lane[];
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
  /** D45: `--spawn-root` is set: the home session takes spawns and this spawner runs them. */
  spawner?: Spawner;
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
  surface: Pick<
    VendorSurface,
    'steeringType' | 'holds' | 'sendInput' | 'controls' | 'cancels' | 'approvals' | 'startType'
  >,
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
  // D43: a send_input vendor's instruct starts turns through its channel, so only with that gate on.
  ...(instruct && control && surface.startType !== undefined ? [surface.startType] : []),
  ...(sendInput && surface.cancels === true ? ['control.cancel'] : []),
  ...(sendInput && surface.sendInput !== undefined ? [surface.sendInput.type] : []),
];

const reportToStderr = (e: SteeringError): void => {
  process.stderr.write(`aep-steer: ${e.code}: ${e.message}\n`);
};

export async function startAdapter(opts: AdapterOptions): Promise<AdapterHandle> {
  const onError = opts.onError ?? reportToStderr;
  const lanes = opts.lanes ?? [];
  const home = opts.spawner && new HomeSession(homeSessionOf(opts.surface.token, opts.host), opts.surface.token);
  const host = new ActorHost({ ...hostOptions(opts, lanes, onError), ...(home === undefined ? {} : { home }) });
  // Declared before the journal, whose health events and retried inputs go out through them.
  const events$ = new Subject<AepEvent>();
  const feedback$ = new Subject<SessionItem>();
  const journal = new Journal(journalOptions(opts, onError, events$, feedback$), host);
  const outbox = journal.outbox;

  let endpoint: HookEndpoint;
  try {
    endpoint = await startHookEndpoint(endpointOptions(opts, host, lanes, onError));
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
  const { hookItems$, unreadable$, readable$ } = hookSources(
    opts.arrivals$ ? merge(endpoint.arrivals$, opts.arrivals$) : endpoint.arrivals$,
    opts.surface,
    host,
  );
  const commands$ = merge(opts.relay?.commands$ ?? EMPTY, injected$).pipe(fromCommands(Date.now));
  const ticks$ = sessionTicks(host, opts.ttlMs ?? 0, opts.resumeWindowMs ?? opts.surface.resumeWindowMs ?? 0);

  // What settled steps release reaches the sinks through these two Subjects, so a step costs no
  // Observable of its own: `released$` carries events and feedback once a step's records are
  // durable, `effects$` the few effects that run on as streams (holds and lane calls).
  const released$ = new Subject<Out>();
  const effects$ = new Subject<Observable<SessionItem>>();
  const { settle } = performer({
    lanes,
    hooks,
    journal,
    start: (effect$) => effects$.next(effect$),
    release: (out) => released$.next(out),
    closed: () => closed,
    ...(opts.spawner === undefined ? {} : { spawner: opts.spawner }),
  });

  const recovered$ = from(host.recover(Date.now()));
  const stepped$ = steer(
    merge(
      readable$,
      commands$,
      feedback$,
      ticks$,
      fromLaneFacts(lanes, host, hookItems$.pipe(filter((h) => h.kind !== 'unreadable')), onError, {
        // A channel tapped without its gate: its approvals are answered in the vendor's own UI.
        observedOnly: opts.sendInput === true ? [] : [channelOf(lanes)?.name ?? ''],
      }),
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
  // D45: the home session's first event of this run claims it, so the relay routes spawns here;
  // stepped once start has returned, so whoever listens to `events$` sees it.
  if (home !== undefined)
    setImmediate(() => {
      if (!closed) feedback$.next({ kind: 'input', session: home.session, input: homeOpened(Date.now()) });
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
      if (home !== undefined) await closeHome(home, opts.spawner!, events$, (item) => feedback$.next(item));
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

/** The sessions' host, as the adapter's options set it up. */
function hostOptions(opts: AdapterOptions, lanes: readonly Lane[], onError: (e: SteeringError) => void): HostOptions {
  const channel = channelOf(lanes);
  const laneOpts = laneHostOptions(lanes);
  const starts = laneStarts(lanes, opts.sendInput === true || opts.control === true, opts.surface.startNote);
  return {
    surface: opts.surface,
    instruct: opts.instruct,
    onError,
    ...(opts.sendInput === true && channel?.send !== undefined
      ? { sendInput: true, inputReady: () => channel.ready?.() ?? true }
      : {}),
    ...(opts.control === true && channel?.check !== undefined
      ? { control: true, controlCheck: channel.check.bind(channel) }
      : {}),
    ...(opts.attentionTimeoutMs === undefined ? {} : { attentionTimeoutMs: opts.attentionTimeoutMs }),
    ...(opts.resumeWindowMs === undefined ? {} : { resumeWindowMs: opts.resumeWindowMs }),
    ...(opts.notice === undefined ? {} : { notice: opts.notice }),
    ...(opts.host === undefined ? {} : { host: opts.host }),
    ...(opts.inspect === undefined ? {} : { inspect: opts.inspect }),
    ...(laneOpts === undefined ? {} : { lanes: laneOpts }),
    ...(starts === undefined ? {} : { starts }),
  };
}

/** The journal: the event log's options, and where its health events and retried inputs go. */
function journalOptions(
  opts: AdapterOptions,
  onError: (e: SteeringError) => void,
  events$: Subject<AepEvent>,
  feedback$: Subject<SessionItem>,
): JournalOptions {
  return {
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
    ...(opts.signingKey === undefined ? {} : { signingKey: opts.signingKey }),
    ...(opts.probeMs === undefined ? {} : { probeMs: opts.probeMs }),
  };
}

/** The hook endpoint on the adapter's port, its status and health routes, and the lanes route. */
function endpointOptions(
  opts: AdapterOptions,
  host: ActorHost,
  lanes: Lane[],
  onError: (e: SteeringError) => void,
): HookEndpointOptions {
  return {
    port: opts.port,
    secret: opts.secret,
    neutral: () => opts.surface.neutralReply(undefined),
    onError,
    status: () => ({
      vendor: opts.surface.token,
      instruct: opts.instruct,
      sendInput: opts.sendInput === true && channelOf(lanes)?.send !== undefined,
      sessions: host.sessionKeys().length,
    }),
    ...(opts.hookBudgetMs === undefined ? {} : { budgetMs: opts.hookBudgetMs }),
    ...(opts.health === undefined ? {} : { health: opts.health }),
    ...(lanes.some(steers) ? { openLanes: () => openLanes(lanes) } : {}),
  };
}

/** The hook arrivals as session items, classified by the vendor table; the unreadable ones apart. */
function hookSources(arrivals$: Observable<HookArrival>, surface: VendorSurface, host: ActorHost) {
  const hooks = host.hooks;
  const hookItems$ = arrivals$.pipe(
    map((a) => {
      hooks.arrived(a);
      return a;
    }),
    fromHookArrivals(surface),
    share(),
  );
  const unreadable$ = hookItems$.pipe(filter((h: HookItem): h is UnreadableHook => h.kind === 'unreadable'));
  const readable$ = hookItems$.pipe(
    filter((h: HookItem): h is Exclude<HookItem, UnreadableHook> => h.kind !== 'unreadable'),
    map(answerEarly),
    laterObservations(),
  );

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
  return { hookItems$, unreadable$, readable$ };
}
