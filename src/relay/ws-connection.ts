// The adapter's duplex link to a relay (AEP-0003 §3.5, AEP-0004 §4.4): hello with role,
// identity and `control.accepts`; commands in as an Observable; events out through `write()`,
// which never waits on the network. The adapter resends from its own log (streams/outbox.ts,
// D23), so the link itself holds nothing while the relay is down.
import WebSocket from 'ws';
import { defer, startWith, Subject, type Observable } from 'rxjs';
import { AEP_VERSION, type AepCommand } from '../protocol/envelope.js';
import { SteeringError } from '../protocol/errors.js';
import { isCommandType } from '../protocol/types.js';
import type { RelayLink } from '../streams/relay-link.js';
import { relayUrls } from './urls.js';

export interface RelayConnectionOptions {
  /** `ws://host:port/socket`, or several nodes' comma-separated: the link moves on when its node is gone. */
  url: string;
  token?: string;
  /** `hello.identity.agent`: the adapter's agent token. */
  agent: string;
  instance?: string;
  role?: 'emitter' | 'both';
  /** `hello.capabilities.control.accepts`; omitted from hello when undefined. */
  accepts?: readonly string[];
  /** D31: `hello.capabilities.control.deliveries`, what instruct's lanes honour; omitted when undefined. */
  deliveries?: readonly string[];
  ackWindowMs?: number;
  emits?: readonly string[];
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /**
   * How long one attempt may take from opening the socket to the relay's hello (TCP connect, HTTP
   * upgrade, hello exchange); past it the socket is dropped and the link tries again.
   */
  helloTimeoutMs?: number;
  /** A report, not a verdict: the link keeps trying. */
  onError?: (err: SteeringError) => void;
}

export const DEFAULT_BACKOFF_MAX_MS = 1000;
/** A relay answers hello at once: ten seconds is a stall, not a slow relay (the consumer's bound too). */
const DEFAULT_HELLO_TIMEOUT_MS = 10_000;

export class RelayConnection implements RelayLink {
  readonly commands$: Observable<AepCommand>;
  readonly state$: Observable<boolean>;
  readonly frames$: Observable<Record<string, unknown>>;
  private readonly state = new Subject<boolean>();
  private readonly frames = new Subject<Record<string, unknown>>();
  private readonly commands = new Subject<AepCommand>();
  private ws: WebSocket | undefined;
  private greeted = false;
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  /** A stalled handshake was reported in this outage (said once until the next hello). */
  private stallSaid = false;
  private readonly waiters: (() => void)[] = [];

  private readonly urls: string[];
  private node = 0;

  constructor(private readonly opts: RelayConnectionOptions) {
    this.urls = relayUrls(opts.url);
    this.commands$ = this.commands.asObservable();
    // A subscriber that comes after the hello (the runtime starts while the link is already up)
    // hears the current state first; otherwise it would wait for a change that never comes.
    this.state$ = defer(() => (this.greeted ? this.state.pipe(startWith(true)) : this.state.asObservable()));
    this.frames$ = this.frames.asObservable();
  }

  write(text: string): boolean {
    if (!this.greeted || this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(text);
    return true;
  }

  buffered(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  /** Opens the first socket; `connectRelay` calls it, so constructing never touches the network. */
  start(): this {
    this.connect();
    return this;
  }

  /** True once the relay's hello arrived on the current socket. */
  get connected(): boolean {
    return this.greeted;
  }

  /** Resolves when the link is greeted (now, or at the next successful hello). */
  ready(): Promise<void> {
    return this.greeted ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.helloTimer);
    this.commands.complete();
    this.state.complete();
    this.frames.complete();
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      ws.once('close', () => resolve());
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, 'adapter stopping');
    });
  }

  private report(code: 'RELAY_UNREACHABLE' | 'RELAY_PROTOCOL', message: string, cause?: unknown): void {
    this.opts.onError?.(new SteeringError(code, message, cause === undefined ? undefined : { cause }));
  }

  private connect(): void {
    if (this.closed) return;
    const headers: Record<string, string> = {};
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    const url = this.urls[this.node]!;
    const ws = new WebSocket(url, { headers });
    this.ws = ws;
    this.greeted = false;
    // Without a bound, a relay that accepts the socket and never answers would hold the link
    // (and every event waiting in the log) for as long as the socket stays open.
    const bound = this.opts.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
    let givenUp = false;
    clearTimeout(this.helloTimer);
    this.helloTimer = setTimeout(() => {
      if (this.ws !== ws || this.greeted) return;
      givenUp = true;
      if (!this.stallSaid) {
        this.stallSaid = true;
        const what = `no hello from the relay at ${url} within ${bound} ms`;
        this.report(
          'RELAY_UNREACHABLE',
          `${what}; reconnecting until one answers (hooks go on, events wait in the log)`,
        );
      }
      ws.terminate();
    }, bound);
    this.helloTimer.unref();
    ws.on('open', () => {
      const capabilities: Record<string, unknown> = {};
      if (this.opts.emits) capabilities.emits = [...this.opts.emits];
      if (this.opts.accepts) {
        capabilities.control = {
          accepts: [...this.opts.accepts],
          ack_window_ms: this.opts.ackWindowMs ?? 10_000,
          ...(this.opts.deliveries === undefined ? {} : { deliveries: [...this.opts.deliveries] }),
        };
      }
      const identity: Record<string, string> = { agent: this.opts.agent };
      if (this.opts.instance) identity.instance = this.opts.instance;
      ws.send(
        JSON.stringify({
          type: 'hello',
          versions: [AEP_VERSION],
          role: this.opts.role ?? 'emitter',
          identity,
          capabilities,
        }),
      );
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onFrame(data.toString());
    });
    ws.on('unexpected-response', (_req, res) => {
      this.report('RELAY_UNREACHABLE', `relay refused the connection: HTTP ${res.statusCode}`);
      ws.terminate();
    });
    ws.on('error', (err) => {
      // The link's own give-up surfaces as "closed before the connection was established": said above.
      if (!givenUp) this.report('RELAY_UNREACHABLE', `relay link: ${err.message}`, err);
    });
    ws.on('close', () => {
      if (this.ws !== ws) return;
      clearTimeout(this.helloTimer);
      if (this.greeted) this.state.next(false);
      this.greeted = false;
      this.retry();
    });
  }

  private retry(): void {
    if (this.closed) return;
    const initial = this.opts.backoffInitialMs ?? 250;
    // The next node is tried at once; the backoff grows once every node was tried, and stays at
    // most a second by default so a relay that comes back has every session re-claimed quickly.
    this.node = (this.node + 1) % this.urls.length;
    const delay =
      this.node !== 0 ? 0 : Math.min(this.opts.backoffMaxMs ?? DEFAULT_BACKOFF_MAX_MS, initial * 2 ** this.attempt);
    if (this.node === 0) this.attempt += 1;
    this.timer = setTimeout(() => this.connect(), delay);
    this.timer.unref();
  }

  private onFrame(text: string): void {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.report('RELAY_PROTOCOL', 'relay sent a frame that is not JSON');
      return;
    }
    const type = m.type;
    if (typeof type === 'string' && type.includes('.')) {
      if (isCommandType(type) && typeof m.session === 'string') this.commands.next(m as AepCommand);
      else this.frames.next(m);
      return;
    }
    switch (type) {
      case 'hello':
        this.onHello();
        return;
      case 'ping':
        this.ws?.send(JSON.stringify({ type: 'pong', t: m.t }));
        return;
      case 'error':
        this.frames.next(m);
        // A refusal of an event this link wrote (`cause`) is the outbox's to settle and to say once.
        if (typeof m.id !== 'string' && typeof m.cause !== 'string')
          this.report('RELAY_PROTOCOL', `relay error ${String(m.code)}${m.detail ? `: ${String(m.detail)}` : ''}`);
        return;
      default:
        this.frames.next(m);
        return;
    }
  }

  private onHello(): void {
    clearTimeout(this.helloTimer);
    this.greeted = true;
    this.stallSaid = false;
    this.attempt = 0;
    this.state.next(true);
    for (const w of this.waiters.splice(0)) w();
  }
}

export function connectRelay(opts: RelayConnectionOptions): RelayConnection {
  return new RelayConnection(opts).start();
}
