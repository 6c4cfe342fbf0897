// The bridge's observing half: discovers conversations by polling `GET /api/conversations/search`,
// attaches one event WebSocket per conversation (first attach `resend_mode=all`, reconnects
// `since` where the server's resend stood, tracker.ts), and hands every new event, framed, to the adapter pipeline
// as an arrival that wants no reply. The auth frame is the only thing ever written on a socket.
// Close 4001 (bad key) is reported clearly and retried slowly, 4004 (conversation gone) stops
// that socket, 1013 (subscriber cap) and anything else reconnect with backoff.
import WebSocket from 'ws';
import { type Observable, Subject } from 'rxjs';
import { SteeringError, type AepEvent } from '../../protocol/index.js';
import type { SettledHow } from '../../machines/session-context.js';
import type { HookArrival } from '../../streams/hook-endpoint.js';
import { sourceArrival } from '../source-arrival.js';
import type { Status } from './map.js';
import type { AgentServer } from './agent-server.js';
import { ConversationTracker } from './tracker.js';

export interface ReceiverOptions {
  server: AgentServer;
  /** Discovery interval (AEP_OPENHANDS_POLL, seconds in the environment). */
  pollMs: number;
  /** AEP_OPENHANDS_DELTAS: map StreamingDeltaEvent instead of suppressing it. */
  deltas?: boolean;
  /** AEP_OPENHANDS_CONTROL: confirmation requests are answerable. */
  answerable?: boolean;
  /** The bridge's own logged events, so a restart resumes each conversation where it stood. */
  history?: readonly AepEvent[];
  /** First reconnect delay; doubles up to `backoffMaxMs`. */
  backoffMs?: number;
  backoffMaxMs?: number;
  onError: (e: SteeringError) => void;
}

/** What the healthz endpoint reports about the agent server. */
type SourceHealth = 'unknown' | 'ok' | 'unauthorized' | 'unreachable';

export interface Receiver {
  arrivals$: Observable<HookArrival>;
  /** The last execution_status the socket showed for a conversation. */
  status(conversation: string): Status | null | undefined;
  /** The open attention request of a conversation waiting for confirmation. */
  attention(conversation: string): string | undefined;
  /** How a request of the conversation that is no longer open ended, if the bridge saw it end (D34). */
  ended(conversation: string, request: string): SettledHow | undefined;
  /** A respond is on its way (undefined clears): the flip out of waiting will be its outcome. */
  settle(conversation: string, cause: string | undefined, answer?: Record<string, unknown>): void;
  /** A pause, resume or interrupt is on its way (undefined clears): the next flip is its outcome. */
  expect(conversation: string, cause: string | undefined): void;
  health(): SourceHealth;
  /** Runs one discovery pass now (tests; the timer runs them otherwise). */
  discover(): Promise<void>;
  close(): Promise<void>;
}

interface Attached {
  tracker: ConversationTracker;
  ws?: WebSocket;
  timer?: NodeJS.Timeout;
  attempt: number;
  gone: boolean;
}

/** The adapter's earlier events per conversation, which a restart resumes each tracker from. */
function bySession(events: readonly AepEvent[]): Map<string, AepEvent[]> {
  const history = new Map<string, AepEvent[]>();
  for (const e of events) {
    if (typeof e.session !== 'string') continue;
    const list = history.get(e.session) ?? [];
    list.push(e);
    history.set(e.session, list);
  }
  return history;
}

/** A socket frame as a hook arrival: nothing waits for a reply, and a failure is only reported. */

/** One socket frame as its tracker makes it; undefined: skipped (a frame that is not JSON is reported). */
function frameOf(
  a: Attached,
  raw: WebSocket.RawData,
  at: number,
  opts: ReceiverOptions,
  report: (e: SteeringError) => void,
): Record<string, unknown> | undefined {
  let event: unknown;
  try {
    event = JSON.parse(String(raw));
  } catch {
    report(
      new SteeringError(
        'HOOK_BODY_INVALID',
        `OpenHands socket for ${a.tracker.id} sent a frame that is not JSON; skipped`,
      ),
    );
    return undefined;
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return undefined;
  const frame = a.tracker.frame(event as Record<string, unknown>, at, opts.deltas === true, opts.answerable === true);
  return frame as unknown as Record<string, unknown> | undefined;
}

const keyRefused = (id: string): SteeringError =>
  new SteeringError(
    'SOURCE_UNAUTHORIZED',
    `OpenHands agent server refused the session API key on the event socket of ${id} (close 4001): give the bridge one of the server's OH_SESSION_API_KEYS_* with --server-key or AEP_OPENHANDS_KEY`,
  );

/** Stops a conversation's reconnects and ends its socket. */
function ended(a: Attached): Promise<void> {
  clearTimeout(a.timer);
  const ws = a.ws;
  if (ws === undefined || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise<void>((resolve) => {
    ws.once('close', () => resolve());
    ws.terminate();
  });
}

export function startReceiver(opts: ReceiverOptions): Receiver {
  const arrivals = new Subject<HookArrival>();
  const attached = new Map<string, Attached>();
  const backoff = opts.backoffMs ?? 250;
  const backoffMax = opts.backoffMaxMs ?? 15_000;
  let health: SourceHealth = 'unknown';
  /** Problems reported since the server last answered well: each once, however long it lasts. */
  const reported = new Set<string>();
  let closed = false;
  const history = bySession(opts.history ?? []);

  /** One report per distinct problem, so a long outage does not flood stderr. */
  function report(e: SteeringError): void {
    if (reported.has(e.message)) return;
    reported.add(e.message);
    opts.onError(e);
  }

  function deliver(a: Attached, raw: WebSocket.RawData): void {
    const at = Date.now();
    const body = frameOf(a, raw, at, opts, report);
    if (body !== undefined) arrivals.next(sourceArrival(body, at, report));
  }

  function schedule(a: Attached, ms: number): void {
    if (closed || a.gone) return;
    clearTimeout(a.timer);
    a.timer = setTimeout(() => connect(a), ms);
  }

  function connect(a: Attached): void {
    if (closed || a.gone) return;
    const ws = new WebSocket(opts.server.socketUrl(a.tracker.id, a.tracker.since));
    a.ws = ws;
    a.tracker.attached();
    ws.on('open', () => {
      a.attempt = 0;
      // The one write: first-frame auth, so the key never rides in a URL or a log line.
      const key = opts.server.key;
      if (key !== undefined) ws.send(JSON.stringify({ type: 'auth', session_api_key: key }));
    });
    ws.on('message', (raw) => {
      // A frame after the auth frame proves the key good again, before the next discovery poll.
      if (health === 'unauthorized') health = 'ok';
      deliver(a, raw);
    });
    // The close handler decides what an error means.
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      if (a.ws === ws) a.ws = undefined;
      if (closed) return;
      if (code === 4004) {
        a.gone = true;
        return;
      }
      a.attempt += 1;
      if (code === 4001) {
        health = 'unauthorized';
        report(keyRefused(a.tracker.id));
        schedule(a, backoffMax);
        return;
      }
      schedule(a, Math.min(backoffMax, backoff * 2 ** Math.min(a.attempt - 1, 10)));
    });
  }

  function attach(id: string): void {
    const existing = attached.get(id);
    if (existing !== undefined) {
      // A conversation that closed 4004 and shows up again in discovery is attached afresh.
      if (!existing.gone) return;
      existing.gone = false;
      connect(existing);
      return;
    }
    const a: Attached = { tracker: new ConversationTracker(id), attempt: 0, gone: false };
    a.tracker.restore(history.get(id) ?? []);
    attached.set(id, a);
    connect(a);
  }

  async function discover(): Promise<void> {
    try {
      const list = await opts.server.conversations();
      health = 'ok';
      reported.clear();
      for (const c of list) attach(c.id);
    } catch (err) {
      const e =
        err instanceof SteeringError ? err : new SteeringError('SOURCE_UNREACHABLE', String(err), { cause: err });
      health = e.code === 'SOURCE_UNAUTHORIZED' ? 'unauthorized' : 'unreachable';
      report(e);
    }
  }

  let poll: NodeJS.Timeout | undefined;
  const tick = (): void => {
    void discover().finally(() => {
      if (!closed) poll = setTimeout(tick, opts.pollMs);
    });
  };
  tick();

  return {
    arrivals$: arrivals.asObservable(),
    status: (id) => attached.get(id)?.tracker.lastStatus,
    attention: (id) => attached.get(id)?.tracker.openAttention,
    ended: (id, request) => attached.get(id)?.tracker.endedHow(request),
    settle: (id, cause, answer) => attached.get(id)?.tracker.settle(cause, answer),
    expect: (id, cause) => attached.get(id)?.tracker.expect(cause),
    health: () => health,
    discover,
    async close() {
      closed = true;
      clearTimeout(poll);
      await Promise.all([...attached.values()].map(ended));
      arrivals.complete();
    },
  };
}
