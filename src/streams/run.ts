// The adapter core: sources merged, routed per session, stepped, logged, performed. This file
// owns the bus (the only Subjects) and the only subscribe.
import { EMPTY, Subject, from, interval, map, merge, mergeMap, of, share, timer, type Observable, type Subscription } from 'rxjs';
import { SteeringError, type AepCommand, type AepEvent } from '../protocol/index.js';
import { ActorHost, type Effect, type SessionItem, type SessionView, type StepResult } from './actor-host.js';
import { startHookEndpoint, type HookArrival, type HookEndpoint } from './hook-endpoint.js';
import type { InspectionOption } from './inspect.js';
import { openEventLog, type SyncFn } from './log.js';
import type { RelayLink } from './relay-link.js';
import { replayInto } from './replay.js';
import { steer } from './route.js';
import { toEventLog, toRelay } from './sinks.js';
import { fromCommands, fromHookArrivals, type HookItem } from './sources.js';
import type { InputTransport, VendorSurface } from './surface.js';
import { fromTransportFacts, throughTransport } from './input-transport.js';

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
  close(): Promise<void>;
}

/**
 * `hello.capabilities.control.accepts`: `control.attention.respond` only while a held loop is
 * enabled (VS Code and Hermes hold nothing until their opt-in gate is on), the steering verb only
 * with AEP_INSTRUCT (D5).
 */
export const acceptsFor = (surface: Pick<VendorSurface, 'steeringType' | 'holds' | 'sendInput' | 'cancels' | 'approvals'>, instruct: boolean, sendInput = false): string[] => [
  ...(surface.holds === true || (sendInput && surface.approvals === true) ? ['control.attention.respond'] : []),
  ...(instruct && surface.steeringType !== surface.sendInput?.type ? [surface.steeringType] : []),
  ...(sendInput && surface.cancels === true ? ['control.cancel'] : []),
  ...(sendInput && surface.sendInput !== undefined ? [surface.sendInput.type] : []),
];

const reportToStderr = (e: SteeringError): void => {
  process.stderr.write(`aep-steer: ${e.code}: ${e.message}\n`);
};

type Out = { kind: 'event'; e: AepEvent } | { kind: 'feedback'; item: SessionItem };

export async function startAdapter(opts: AdapterOptions): Promise<AdapterHandle> {
  const onError = opts.onError ?? reportToStderr;
  const { log, existing } = openEventLog(opts.logPath, {
    ...(opts.fsync === undefined ? {} : { fsync: opts.fsync }),
    ...(opts.logSync === undefined ? {} : { sync: opts.logSync }),
  });
  for (const p of existing.problems) onError(p);
  const host = new ActorHost({
    surface: opts.surface, instruct: opts.instruct, onError,
    ...(opts.sendInput === true && opts.transport ? { sendInput: true, inputReady: () => opts.transport?.ready() ?? false } : {}),
    ...(opts.attentionTimeoutMs === undefined ? {} : { attentionTimeoutMs: opts.attentionTimeoutMs }),
    ...(opts.resumeWindowMs === undefined ? {} : { resumeWindowMs: opts.resumeWindowMs }),
    ...(opts.notice === undefined ? {} : { notice: opts.notice }),
    ...(opts.host === undefined ? {} : { host: opts.host }),
    ...(opts.inspect === undefined ? {} : { inspect: opts.inspect }),
  });
  const replayed = replayInto(host, existing.records);

  let endpoint: HookEndpoint;
  try {
    endpoint = await startHookEndpoint({
      port: opts.port, secret: opts.secret, neutral: () => opts.surface.neutralReply(undefined), onError,
      status: () => ({ vendor: opts.surface.token, instruct: opts.instruct, sessions: host.sessionKeys().length }),
      ...(opts.hookBudgetMs === undefined ? {} : { budgetMs: opts.hookBudgetMs }),
      ...(opts.health === undefined ? {} : { health: opts.health }),
    });
  } catch (err) {
    // PORT_IN_USE and the like: leave nothing open behind.
    host.stop();
    void log.close();
    throw err;
  }

  const events$ = new Subject<AepEvent>();
  const feedback$ = new Subject<SessionItem>();
  const injected$ = new Subject<AepCommand>();
  const arrivals = new Map<string, HookArrival>();
  const relaySink = opts.relay ? toRelay(opts.relay, onError) : undefined;
  const commit = toEventLog(log);
  const synced = opts.fsync ?? true;

  const hookItems$ = (opts.arrivals$ ? merge(endpoint.arrivals$, opts.arrivals$) : endpoint.arrivals$).pipe(
    map((a) => {
      arrivals.set(a.id, a);
      return a;
    }),
    fromHookArrivals(opts.surface),
    share(),
  );
  const unreadable$ = hookItems$.pipe(mergeMap((h: HookItem) => (h.kind === 'unreadable' ? of(h) : EMPTY)));
  const readable$ = hookItems$.pipe(mergeMap((h: HookItem) => (h.kind === 'unreadable' ? EMPTY : of(h))));
  const commands$ = merge(opts.relay?.commands$ ?? EMPTY, injected$).pipe(fromCommands(Date.now));
  const ttlMs = opts.ttlMs ?? 0;
  const windowMs = opts.resumeWindowMs ?? opts.surface.resumeWindowMs ?? 0;
  const tickEvery = Math.min(...[ttlMs, windowMs].filter((ms) => ms > 0), 1000);
  const ticks$: Observable<SessionItem> = ttlMs > 0 || windowMs > 0
    ? interval(Math.max(50, tickEvery)).pipe(
      mergeMap(() => {
        const at = Date.now();
        const items: SessionItem[] = [];
        for (const session of host.sessionKeys()) {
          const ctx = host.context(session);
          // Only sessions with something queued can expire anything (D10); only an ended one's window can pass (D25).
          if (ttlMs > 0 && (ctx?.queue.length ?? 0) > 0) items.push({ kind: 'input', session, input: { type: 'ttl.tick', at, ttlMs } });
          if (ctx?.resumeUntil !== undefined && at >= ctx.resumeUntil) items.push({ kind: 'input', session, input: { type: 'window.tick', at } });
        }
        return from(items);
      }),
    )
    : EMPTY;

  /** Writes a reply and, for steering replies, reports the outcome back to the session (D9). */
  function perform(effect: Effect, logged: boolean): Observable<SessionItem> {
    if (effect.kind === 'send' || effect.kind === 'cancel' || effect.kind === 'answer') return throughTransport(opts.transport, effect, logged, Date.now);
    const arrival = arrivals.get(effect.hookId);
    if (effect.kind === 'hold') {
      arrival?.hold(effect.timeoutMs);
      return timer(effect.timeoutMs).pipe(
        map((): SessionItem => ({ kind: 'input', session: effect.session, input: { type: 'attention.timeout', at: Date.now(), requestId: effect.requestId } })),
      );
    }
    arrivals.delete(effect.hookId);
    // D12: a reply with instructions goes out only once its journal record is durable.
    const reply = logged || !effect.confirm ? effect.reply : opts.surface.neutralReply(undefined);
    const written = arrival ? arrival.respond(reply) : Promise.resolve(false);
    if (!effect.confirm || effect.session === undefined) return EMPTY;
    const session = effect.session;
    return from(written).pipe(
      map((ok): SessionItem => ({
        kind: 'input', session,
        input: { type: ok && logged ? 'reply.written' : 'reply.failed', at: Date.now(), hookId: effect.hookId },
      })),
    );
  }

  const claimed = new Set(host.sessionKeys());
  function settle(r: StepResult & { item?: SessionItem }): Observable<Out> {
    // A session first seen here is announced, so the relay routes its commands to us (D17).
    if (r.item?.kind === 'hook' && !claimed.has(r.item.session)) {
      claimed.add(r.item.session);
      opts.relay?.claimSessions?.([...claimed]);
    }
    const release = (logged: boolean): Observable<Out> => merge(
      from(r.events).pipe(map((e): Out => ({ kind: 'event', e }))),
      from(r.effects).pipe(mergeMap((f) => perform(f, logged)), map((item): Out => ({ kind: 'feedback', item }))),
    );
    const failed = (cause: unknown): false => {
      onError(cause instanceof SteeringError ? cause : new SteeringError('LOG_WRITE_FAILED', String(cause), { cause }));
      return false;
    };
    // Without fsync a written batch is as durable as this log makes it, so the step settles at once.
    if (!synced) {
      let logged = true;
      try {
        log.append(r.records);
      } catch (cause) {
        logged = failed(cause);
      }
      return release(logged);
    }
    // Nothing leaves before the step's records are durable (D4 acks, D9/D12 replies). Commits
    // settle in call order, so events keep the order their steps ran in.
    return from(commit(r.records).then(() => true, failed)).pipe(mergeMap(release));
  }

  const recovered$ = from(host.recover(Date.now()));
  const stepped$ = steer(merge(readable$, commands$, feedback$, ticks$, fromTransportFacts(opts.transport, host)), host);
  const neutral$: Observable<Out> = unreadable$.pipe(
    mergeMap((u) => {
      onError(u.error);
      arrivals.delete(u.arrival.id);
      return from(u.arrival.respond(opts.surface.neutralReply(undefined))).pipe(mergeMap(() => EMPTY));
    }),
  );

  const subscription: Subscription = merge(merge(recovered$, stepped$).pipe(mergeMap(settle)), neutral$).subscribe({
    next: (o) => {
      if (o.kind === 'feedback') {
        feedback$.next(o.item);
        return;
      }
      relaySink?.(o.e);
      events$.next(o.e);
    },
    error: (err: unknown) => onError(new SteeringError('EVENT_INVALID', `adapter pipeline stopped: ${String(err)}`, { cause: err })),
  });
  opts.relay?.claimSessions?.(host.sessionKeys());
  // A restarted adapter has sent nothing yet, so the relay sees no claim for the sessions it
  // continues: redeliver each live one's last logged event unchanged (consumers and the relay
  // dedupe it on (source, id)) so their commands route here again (D11, D17).
  for (const [session, e] of replayed.lastEvents) {
    if (!host.isEnded(session)) opts.relay?.send(e);
  }

  let closed = false;
  return {
    port: endpoint.port,
    hookUrl: endpoint.url,
    events$: events$.asObservable(),
    sessions: () => host.views(),
    command: (c) => injected$.next(c),
    async close() {
      if (closed) return;
      closed = true;
      await endpoint.close();
      subscription.unsubscribe();
      host.stop();
      await log.close();
      events$.complete();
      await opts.relay?.close();
    },
  };
}
