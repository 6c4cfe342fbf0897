// One outbound WebSocket to the Cline hub (hub protocol v1, cline-hub-observed §1.2): registers
// with no advertised capabilities (so the hub never routes work to us), subscribes to events,
// sends commands and matches replies by requestId. It never throws into its caller: on failure it
// reports, stays down (the adapter is then observe-only) and reconnects after a second.
import { Subject, type Observable } from 'rxjs';
import WebSocket from 'ws';
import { SteeringError } from '../../../protocol/errors.js';
import type { HubEndpoint } from './endpoint.js';
import { recordShape } from '../../../protocol/wire-shapes.js';

export interface HubEvent {
  event: string;
  sessionId?: string;
  payload: Record<string, unknown>;
}

export interface HubReply {
  ok: boolean;
  payload?: Record<string, unknown>;
  error?: { code?: string; message?: string };
}

export interface HubConnectionOptions {
  endpoint: () => HubEndpoint | { missing: string };
  clientId?: string;
  /** What this client registers as; the adapter's tap is `aep-adapter-cline` with no capabilities. */
  clientType?: string;
  capabilities?: { name: string }[];
  reconnectMs?: number;
  /** A command's reply limit; send_input with queue/steer answers within milliseconds. */
  commandTimeoutMs?: number;
  onError?: (e: SteeringError) => void;
  /** Called when the hub is reached again after a reported problem, so the log says it is back. */
  onBack?: (url: string) => void;
}

const VERSION = 'v1';

export class HubConnection {
  readonly clientId: string;
  private readonly opts: HubConnectionOptions;
  private socket: WebSocket | undefined;
  private registered = false;
  private closed = false;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastProblem = '';
  private readonly pending = new Map<string, (r: HubReply) => void>();
  private readonly events = new Subject<HubEvent>();
  private readonly state = new Subject<boolean>();
  readonly events$: Observable<HubEvent> = this.events.asObservable();
  /** true on every (re)connect, false on every loss. */
  readonly up$: Observable<boolean> = this.state.asObservable();

  constructor(opts: HubConnectionOptions) {
    this.opts = opts;
    this.clientId = opts.clientId ?? `aep-adapter-cline-${process.pid}`;
    this.connect();
  }

  ready(): boolean {
    return this.registered && this.socket?.readyState === WebSocket.OPEN;
  }

  /** Sends a command; resolves with the hub's reply, or an error reply when it cannot be sent or answered. */
  command(command: string, sessionId: string | undefined, payload: Record<string, unknown> = {}): Promise<HubReply> {
    return this.issue(command, sessionId, payload).reply;
  }

  /**
   * A command and its request id, which the hub repeats in what the command sets off (its
   * `run.started` for a send_input), so a caller can tell its own command's events from others'.
   */
  issue(
    command: string,
    sessionId: string | undefined,
    payload: Record<string, unknown> = {},
  ): { requestId: string; reply: Promise<HubReply> } {
    const requestId = `aep-${++this.seq}`;
    return { requestId, reply: this.send(requestId, command, sessionId, payload) };
  }

  private send(
    requestId: string,
    command: string,
    sessionId: string | undefined,
    payload: Record<string, unknown>,
  ): Promise<HubReply> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN)
      return Promise.resolve({ ok: false, error: { code: 'hub_unreachable' } });
    const envelope: Record<string, unknown> = {
      version: VERSION,
      clientId: this.clientId,
      requestId,
      command,
      payload,
    };
    if (sessionId !== undefined) envelope.sessionId = sessionId;
    return new Promise<HubReply>((resolve) => {
      const timeout = setTimeout(() => {
        this.pending.delete(requestId);
        resolve({ ok: false, error: { code: 'hub_timeout' } });
      }, this.opts.commandTimeoutMs ?? 10_000);
      this.pending.set(requestId, (r) => {
        clearTimeout(timeout);
        resolve(r);
      });
      socket.send(JSON.stringify({ kind: 'command', envelope }), (err) => {
        if (!err) return;
        this.pending.get(requestId)?.({ ok: false, error: { code: 'hub_unreachable', message: err.message } });
        this.pending.delete(requestId);
      });
    });
  }

  private report(message: string): void {
    // One report per distinct problem: a hub that stays away is not a stream of errors.
    if (message === this.lastProblem) return;
    this.lastProblem = message;
    this.opts.onError?.(
      new SteeringError(
        'RELAY_UNREACHABLE',
        `Cline hub: ${message}; hooks are still observed, hub control resumes once it is back`,
      ),
    );
  }

  private connect(): void {
    if (this.closed) return;
    const ep = this.opts.endpoint();
    if ('missing' in ep) {
      this.report(ep.missing);
      this.retry();
      return;
    }
    const socket = new WebSocket(ep.url, [`cline-hub-auth.${ep.token}`]);
    this.socket = socket;
    socket.on('open', () => {
      void this.register(socket);
    });
    socket.on('message', (data) => this.onFrame(String(data)));
    socket.on('error', (err) => this.report(`${ep.url}: ${err.message}`));
    socket.on('close', (code, reason) => {
      // Only the current socket's end changes the state: a late close of an earlier one must not.
      if (socket !== this.socket) return;
      const was = this.registered;
      if (was && !this.closed)
        this.report(`connection closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''}); reconnecting`);
      this.registered = false;
      this.socket = undefined;
      for (const [, resolve] of this.pending) resolve({ ok: false, error: { code: 'hub_unreachable' } });
      this.pending.clear();
      if (was) this.state.next(false);
      this.retry();
    });
  }

  private async register(socket: WebSocket): Promise<void> {
    const reply = await this.command('client.register', undefined, {
      clientId: this.clientId,
      clientType: this.opts.clientType ?? 'aep-adapter-cline',
      displayName: 'AEP adapter',
      transport: 'native',
      capabilities: this.opts.capabilities ?? [],
    });
    if (socket !== this.socket) return;
    if (!reply.ok) {
      this.report(`client.register refused: ${reply.error?.code ?? 'unknown'}`);
      socket.close();
      return;
    }
    socket.send(JSON.stringify({ kind: 'stream.subscribe', clientId: this.clientId }));
    this.registered = true;
    if (this.lastProblem !== '') this.opts.onBack?.(socket.url);
    this.lastProblem = '';
    this.state.next(true);
  }

  private onFrame(text: string): void {
    let frame: { kind?: string; envelope?: Record<string, unknown> };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    const env = frame.envelope ?? {};
    recordShape('cline hub', `${frame.kind}/${env.type ?? env.method ?? ''}`, frame);
    if (frame.kind === 'reply' && typeof env.requestId === 'string') {
      const resolve = this.pending.get(env.requestId);
      this.pending.delete(env.requestId);
      resolve?.({
        ok: env.ok === true,
        ...(typeof env.payload === 'object' && env.payload !== null
          ? { payload: env.payload as Record<string, unknown> }
          : {}),
        ...(typeof env.error === 'object' && env.error !== null
          ? { error: env.error as HubReply['error'] & object }
          : {}),
      });
      return;
    }
    if (frame.kind === 'event' && typeof env.event === 'string') {
      const payload =
        typeof env.payload === 'object' && env.payload !== null ? (env.payload as Record<string, unknown>) : {};
      const sessionId =
        typeof env.sessionId === 'string'
          ? env.sessionId
          : typeof payload.sessionId === 'string'
            ? payload.sessionId
            : undefined;
      this.events.next(
        sessionId === undefined ? { event: env.event, payload } : { event: env.event, sessionId, payload },
      );
    }
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect();
    }, this.opts.reconnectMs ?? 1000);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const socket = this.socket;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close();
        setTimeout(resolve, 1000).unref();
      });
    }
    this.events.complete();
    this.state.complete();
  }
}
