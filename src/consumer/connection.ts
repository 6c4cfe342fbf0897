// The consumer side of the WS binding (AEP-0003 §3.5, AEP-0004 §4.5): hello as consumer,
// subscriptions, roster, and sending a command that settles on the stream: an ack event with
// `cause` = the command id, or a relay error frame with that `cause`, or silence (timeout).
import WebSocket from 'ws';
import { AEP_VERSION, type AepCommand, type AepEvent, type CaptureLevel } from '../protocol/envelope.js';
import { FrameError, SteeringError, type RelayRefusalCode } from '../protocol/errors.js';
import { newId } from '../protocol/build.js';
import { compileFilter } from '../protocol/filter.js';
import { CODE_ATTR } from '../protocol/types.js';
import type { RosterEntry } from '../relay/types.js';
import { tokenHint } from '../relay/local-token.js';
import { relayUrls } from '../relay/urls.js';
import { Slots } from './slots.js';

export type { RosterEntry };

export interface ConsumerOptions {
  url: string;
  token?: string;
  agent: string;
  instance?: string;
  /** How long to wait for the relay's hello and for frame replies. */
  timeoutMs?: number;
}

export interface SubscribeRequest {
  filter?: Record<string, unknown>;
  from?: 'all' | { session: string; epoch?: number; seq?: number }[];
  capture?: CaptureLevel;
}

export interface Subscription {
  id: string;
  close(): void;
}

export interface SubscribeHandlers {
  onEvent(e: AepEvent, raw: string): void;
  onExhausted?(session: string, earliest: { epoch: number; seq: number }): void;
}

/** How a command ended, seen from its sender. */
export type Settlement =
  | { outcome: 'accepted'; ack: AepEvent }
  | { outcome: 'rejected'; ack: AepEvent; reason: string; code?: string; detail?: string }
  | { outcome: 'refused'; code: RelayRefusalCode | string; detail?: string }
  | { outcome: 'timeout' };

type Frame = Record<string, unknown>;

/** History replays one shared connection runs at once, well inside the relay's 64 subscriptions. */
const REPLAY_SLOTS = 16;

export class RelayConsumer {
  private readonly pending = new Map<string, (f: Frame) => void>();
  /**
   * Handlers with their filter: events arrive bare, so each subscription re-applies its own
   * (AEP-0003 §3.5). Overlapping subscriptions may see one copy more than once; dedupe on (source, id).
   */
  private readonly subs = new Map<string, { match: (e: AepEvent) => boolean; handlers: SubscribeHandlers }>();
  private readonly causeWaiters = new Map<string, (f: Frame) => void>();
  private readonly closeWaiters = new Set<(err: Error) => void>();
  /**
   * Who the relay authenticated this connection as (its hello's `capabilities.principal`). When
   * `bound`, commands must name `identity` as their sender (D19).
   */
  principal: { identity: string; bound: boolean } | undefined;
  /** Set by `shareLive`: the capture of the one relay subscription that serves live ones here. */
  private shared: { capture: CaptureLevel | undefined } | undefined;
  private readonly replays = new Slots(REPLAY_SLOTS);

  private constructor(
    private readonly ws: WebSocket,
    private readonly timeoutMs: number,
  ) {
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onFrame(data.toString());
    });
    ws.on('close', () => {
      const err = new SteeringError('RELAY_UNREACHABLE', 'relay connection closed');
      for (const w of this.closeWaiters) w(err);
    });
  }

  /**
   * Opens the socket and completes the hello exchange; with several relay nodes
   * (comma-separated) the first that answers. A refused token is final (every node shares the policy).
   */
  static async connect(opts: ConsumerOptions): Promise<RelayConsumer> {
    const urls = relayUrls(opts.url);
    let last: unknown;
    for (const url of urls) {
      try {
        return await RelayConsumer.connectOne({ ...opts, url });
      } catch (err) {
        if (err instanceof SteeringError && err.code === 'RELAY_UNAUTHORIZED') throw err;
        last = err;
      }
    }
    throw last;
  }

  private static connectOne(opts: ConsumerOptions): Promise<RelayConsumer> {
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const ws = new WebSocket(opts.url, { headers });
    return new Promise((resolve, reject) => {
      const fail = (err: Error) => {
        clearTimeout(timer);
        ws.terminate();
        reject(
          err instanceof SteeringError
            ? err
            : new SteeringError('RELAY_UNREACHABLE', `cannot reach relay at ${opts.url}: ${err.message}`, {
                cause: err,
              }),
        );
      };
      const timer = setTimeout(
        () => fail(new SteeringError('RELAY_UNREACHABLE', `no hello from relay at ${opts.url} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      ws.once('error', fail);
      ws.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        // Reached, but the token was refused: a different fix from a relay that is not there.
        if (status === 401 || status === 403) {
          fail(
            new SteeringError(
              'RELAY_UNAUTHORIZED',
              `relay at ${opts.url} refused the ${opts.token ? 'token' : 'connection without a token'} (HTTP ${status}): ${tokenHint()}`,
            ),
          );
        } else {
          fail(new SteeringError('RELAY_UNREACHABLE', `relay refused the connection: HTTP ${status}`));
        }
      });
      ws.once('open', () => {
        const identity: Record<string, string> = { agent: opts.agent };
        if (opts.instance) identity.instance = opts.instance;
        ws.send(
          JSON.stringify({ type: 'hello', versions: [AEP_VERSION], role: 'consumer', identity, capabilities: {} }),
        );
      });
      ws.once('message', (data) => {
        const m = JSON.parse(data.toString()) as Frame;
        if (m.type !== 'hello')
          return fail(
            new SteeringError('RELAY_PROTOCOL', `relay answered hello with ${String(m.type)} ${String(m.code ?? '')}`),
          );
        clearTimeout(timer);
        ws.off('error', fail);
        ws.on('error', () => {});
        const c = new RelayConsumer(ws, timeoutMs);
        const p = (m.capabilities as { principal?: { identity?: unknown; bound?: unknown } } | undefined)?.principal;
        if (typeof p?.identity === 'string') c.principal = { identity: p.identity, bound: p.bound === true };
        resolve(c);
      });
    });
  }

  private onFrame(text: string): void {
    let m: Frame;
    try {
      m = JSON.parse(text) as Frame;
    } catch {
      return;
    }
    const type = m.type;
    if (typeof type === 'string' && type.includes('.')) {
      for (const s of this.subs.values()) if (s.match(m as AepEvent)) s.handlers.onEvent(m as AepEvent, text);
      return;
    }
    if (type === 'ping') {
      this.ws.send(JSON.stringify({ type: 'pong', t: m.t }));
      return;
    }
    if (type === 'replay-exhausted' && typeof m.sub === 'string') {
      this.subs.get(m.sub)?.handlers.onExhausted?.(String(m.session), m.earliest as { epoch: number; seq: number });
      return;
    }
    if (type === 'error' && typeof m.cause === 'string') {
      this.causeWaiters.get(m.cause)?.(m);
      return;
    }
    if (typeof m.id === 'string') this.pending.get(m.id)?.(m);
  }

  private request(frame: Frame & { id: string }): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const done = (f: Frame | Error) => {
        clearTimeout(timer);
        this.pending.delete(frame.id);
        this.closeWaiters.delete(done);
        if (f instanceof Error) reject(f);
        else resolve(f);
      };
      const timer = setTimeout(
        () =>
          done(
            new SteeringError(
              'RELAY_PROTOCOL',
              `no reply to ${String(frame.type)} ${frame.id} within ${this.timeoutMs} ms`,
            ),
          ),
        this.timeoutMs,
      );
      this.pending.set(frame.id, done);
      this.closeWaiters.add(done);
      this.ws.send(JSON.stringify(frame));
    });
  }

  /** Subscribes; resolves once the relay answered `subscribed` (replayed events may already have arrived). */
  subscribe(req: SubscribeRequest, handlers: SubscribeHandlers): Promise<Subscription> {
    return this.open(req, handlers, this.shared !== undefined && req.capture === this.shared.capture);
  }

  private async open(req: SubscribeRequest, handlers: SubscribeHandlers, local: boolean): Promise<Subscription> {
    const id = `sub-${newId()}`;
    // A filter the relay would refuse is refused here too, before anything is sent.
    let match: (e: AepEvent) => boolean;
    try {
      match = compileFilter(req.filter ?? {});
    } catch (err) {
      throw new FrameError('invalid-filter', (err as Error).message);
    }
    this.subs.set(id, { match, handlers });
    if (local) return this.local(id, req);
    const reply = await this.request({ type: 'subscribe', id, ...req });
    if (reply.type !== 'subscribed') {
      this.subs.delete(id);
      throw new FrameError(String(reply.code), reply.detail as string | undefined);
    }
    return {
      id,
      close: () => {
        this.subs.delete(id);
        if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'unsubscribe', id }));
      },
    };
  }

  /**
   * One wide live subscription at `capture` serves every later live subscription at the same
   * capture here, filtered locally: many concurrent commands (each watching its ack and outcome)
   * then hold one relay subscription instead of two each. It stays open with the connection.
   */
  async shareLive(capture?: CaptureLevel): Promise<void> {
    if (this.shared !== undefined) return;
    await this.subscribe({ filter: {}, ...(capture ? { capture } : {}) }, { onEvent: () => {} });
    this.shared = { capture };
  }

  /**
   * A subscription served by the shared one; its history part (`from`) is a relay replay, at most
   * REPLAY_SLOTS at once, closed once it is through (a roster round trip behind it is the barrier).
   */
  private async local(id: string, req: SubscribeRequest): Promise<Subscription> {
    const close = () => void this.subs.delete(id);
    if (req.from !== undefined) {
      const release = await this.replays.take();
      try {
        // Its events reach the local subscription's handlers through the same filter.
        const replay = await this.open(req, { onEvent: () => {} }, false);
        void this.roster()
          .catch(() => {})
          .finally(() => {
            replay.close();
            release();
          });
      } catch (err) {
        release();
        close();
        throw err;
      }
    }
    return { id, close };
  }

  /** The roster; with `offline`, also the sessions the relay holds history of and no one claims (D37). */
  async roster(opts: { offline?: boolean } = {}): Promise<RosterEntry[]> {
    const reply = await this.request({
      type: 'roster',
      id: `roster-${newId()}`,
      ...(opts.offline === true ? { offline: true } : {}),
    });
    if (reply.type !== 'roster') throw new FrameError(String(reply.code), reply.detail as string | undefined);
    return reply.entries as RosterEntry[];
  }

  /**
   * Sends a command and settles it on the stream (AEP-0004 §4.5). The ack subscription is in
   * place before the command leaves; each retry resends the identical text (same id).
   */
  async send(cmd: AepCommand, opts: { timeoutMs?: number; retries?: number } = {}): Promise<Settlement> {
    const text = JSON.stringify(cmd);
    const ackWindow = opts.timeoutMs ?? 10_000;
    let settle!: (s: Settlement) => void;
    const settled = new Promise<Settlement>((resolve) => (settle = resolve));
    const sub = await this.subscribe(
      { filter: { cause: cmd.id, type: ['control.accepted', 'control.rejected'] } },
      {
        onEvent: (e) => {
          if (e.cause !== cmd.id) return;
          if (e.type === 'control.accepted') settle({ outcome: 'accepted', ack: e });
          else {
            const d = (e.data ?? {}) as { reason?: unknown; detail?: unknown };
            const s: Settlement = { outcome: 'rejected', ack: e, reason: String(d.reason ?? 'invalid') };
            const code = e[CODE_ATTR];
            if (typeof code === 'string') s.code = code;
            if (typeof d.detail === 'string') s.detail = d.detail;
            settle(s);
          }
        },
      },
    );
    this.causeWaiters.set(cmd.id, (f) => {
      const s: Settlement = { outcome: 'refused', code: String(f.code) };
      if (typeof f.detail === 'string') s.detail = f.detail;
      settle(s);
    });
    const onClose = () => settle({ outcome: 'timeout' });
    this.closeWaiters.add(onClose);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      for (let attempt = 0; attempt <= (opts.retries ?? 0); attempt++) {
        this.ws.send(text);
        const outcome = await Promise.race([
          settled,
          new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ackWindow))),
        ]);
        clearTimeout(timer);
        if (outcome !== undefined) return outcome;
      }
      return { outcome: 'timeout' };
    } finally {
      clearTimeout(timer);
      this.causeWaiters.delete(cmd.id);
      this.closeWaiters.delete(onClose);
      sub.close();
    }
  }

  /** Calls `fn` once when the connection closes, whoever closed it. */
  onClose(fn: () => void): void {
    this.ws.once('close', () => fn());
  }

  /** Sends an event or frame text as is (tests, byte-identical retries). */
  sendText(text: string): void {
    this.ws.send(text);
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close(1000);
    });
  }
}
