// One WebSocket connection to the relay (AEP-0003 §3.5, §4, §6.5): hello first, one negotiated
// version, subscriptions with in-band errors, roster, ping/pong, commands routed per D17.
import type { Duplex } from 'node:stream';
import type { WebSocket, RawData } from 'ws';
import type { AepEvent } from '../protocol/envelope.js';
import { relayCheck } from '../protocol/validate.js';
import { isCommandType } from '../protocol/types.js';
import type { Principal } from './acl.js';
import { oneLine, SUPPORTED_VERSIONS, type Incoming, type RelayCore } from './core.js';
import type { Peer } from './types.js';
import type { Channel, Sink } from './hub.js';
import type { Position } from './session-store.js';
import { parseSubscription } from './subscription.js';
import { SubscribeError } from '../protocol/errors.js';

type Role = 'emitter' | 'consumer' | 'both';
const ROLES: readonly string[] = ['emitter', 'consumer', 'both'];

/** Close codes: 1002 protocol error, 1003 unsupported data, 1013 try again later (backpressure). */
const CLOSE_PROTOCOL = 1002;
const CLOSE_UNSUPPORTED = 1003;
const CLOSE_OVERLOAD = 1013;
/** 1008 policy violation: the token lost rights (D39); a reconnect gets what the file grants now. */
const CLOSE_REVOKED = 1008;

export class SocketConnection implements Peer, Channel {
  role: Role = 'both';
  accepts: readonly string[] | undefined;
  readonly claims = new Set<string>();
  identity: { agent?: string; instance?: string } = {};
  control: unknown;
  emits: unknown;
  private greeted = false;
  /** Frames that arrived while a replay from a store that answers later was running, in order. */
  private waiting: [RawData, boolean][] | undefined;
  private readonly subs = new Map<string, Sink>();
  private corked = false;
  /** D39: frames that arrive after revocation (during the close handshake) are not served. */
  private revoked = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly core: RelayCore,
    /** Who authenticated (the anonymous party on a tokenless relay); a refused token never gets here. */
    readonly principal: Principal,
    /** The upgraded socket under `ws`: frames sent in one turn leave in one write. */
    private readonly socket?: Duplex,
  ) {
    ws.on('message', (data, isBinary) => {
      if (this.revoked) return;
      if (this.waiting) this.waiting.push([data, isBinary]);
      else this.onMessage(data, isBinary);
    });
    ws.on('close', () => this.onClose());
    ws.on('error', () => this.onClose());
  }

  // --- Channel (backpressure) ---
  pressure(): number {
    return this.ws.bufferedAmount;
  }

  overflow(delivered: { sub: string; session: string; epoch: number; seq: number }[]): void {
    this.sendFrame({ type: 'closing', reason: 'backpressure', delivered });
    this.ws.close(CLOSE_OVERLOAD, 'backpressure');
    this.onClose();
  }

  // --- Peer (routing) ---
  sendText(text: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.cork();
    this.ws.send(text);
  }

  /**
   * Holds this turn's frames in the socket and writes them with one `writev` once the turn's
   * work is done: a chunk of received frames fans out as one write per subscriber instead of a
   * system call per frame (the largest cost of fan-out in a CPU profile). Order is unchanged.
   */
  private cork(): void {
    const socket = this.socket;
    if (this.corked || socket === undefined) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  /** A text frame whose UTF-8 bytes are at hand (a received frame fanned out as it came). */
  sendBytes(bytes: Buffer): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.cork();
    this.ws.send(bytes, { binary: false });
  }

  sendFrame(frame: Record<string, unknown>): void {
    this.sendText(JSON.stringify(frame));
  }

  /** The relay's keep-alive (AEP-0003 §4: ping every 30 s or less). */
  ping(): void {
    if (this.greeted) this.sendFrame({ type: 'ping', t: Date.now() });
  }

  shutdown(): void {
    this.ws.close(1001, 'shutting down');
  }

  /**
   * D39: the tokens file no longer grants this connection's rights. It stops being served at
   * once (subscriptions, claims, routing); a peer that does not finish the close is cut after 1 s.
   */
  revoke(detail: string): void {
    if (this.revoked) return;
    this.revoked = true;
    this.waiting = undefined;
    this.sendFrame({ type: 'closing', reason: 'revoked', detail, delivered: [] });
    this.ws.close(CLOSE_REVOKED, 'token revoked or changed');
    this.onClose();
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private onClose(): void {
    this.core.hub.removeChannel(this);
    this.core.leave(this);
    this.subs.clear();
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      // Binary frames are reserved (AEP-0003 §3.5).
      this.sendFrame({ type: 'error', code: 'binary-unsupported' });
      this.ws.close(CLOSE_UNSUPPORTED, 'binary frames are reserved');
      return;
    }
    const text = data.toString();
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.sendFrame({ type: 'error', code: 'bad-json' });
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.sendFrame({ type: 'error', code: 'bad-json', detail: 'a frame is one JSON object' });
      return;
    }
    const m = msg as Record<string, unknown>;
    if (!this.greeted) {
      this.hello(m);
      return;
    }
    const type = m.type;
    // A dotted `type` is an event; a dotless one is a connection frame (AEP-0003 §3.5).
    if (typeof type === 'string' && type.includes('.')) {
      this.onEvent(m, text, data as Buffer);
      return;
    }
    switch (type) {
      case 'subscribe':
        this.subscribe(m);
        return;
      case 'unsubscribe':
        this.unsubscribe(m);
        return;
      case 'roster':
        this.roster(m);
        return;
      case 'ping':
        this.sendFrame({ type: 'pong', t: m.t });
        return;
      default:
        // Unknown frames (and `pong`, a second `hello`) are ignored (AEP-0003 §3.5).
        return;
    }
  }

  private hello(m: Record<string, unknown>): void {
    if (m.type !== 'hello') {
      this.sendFrame({ type: 'error', code: 'hello-required' });
      this.ws.close(CLOSE_PROTOCOL, 'hello required');
      return;
    }
    const offered = Array.isArray(m.versions) ? m.versions.filter((v): v is string => typeof v === 'string') : [];
    const version = offered.find((v) => (SUPPORTED_VERSIONS as readonly string[]).includes(v));
    if (version === undefined) {
      this.sendFrame({ type: 'error', code: 'version-unsupported', versions: [...SUPPORTED_VERSIONS] });
      this.ws.close(CLOSE_PROTOCOL, 'version unsupported');
      return;
    }
    if (typeof m.role === 'string' && ROLES.includes(m.role)) this.role = m.role as Role;
    const id = m.identity as Record<string, unknown> | undefined;
    if (typeof id === 'object' && id !== null) {
      if (typeof id.agent === 'string') this.identity.agent = id.agent;
      if (typeof id.instance === 'string') this.identity.instance = id.instance;
    }
    const caps = m.capabilities as Record<string, unknown> | undefined;
    if (typeof caps === 'object' && caps !== null) {
      this.control = caps.control;
      this.emits = caps.emits;
      const accepts = (caps.control as { accepts?: unknown } | undefined)?.accepts;
      if (Array.isArray(accepts)) this.accepts = accepts.filter((t): t is string => typeof t === 'string');
    }
    this.greeted = true;
    this.core.peers.add(this);
    // `principal` tells the client who the relay authenticated; a bound identity (tokens file)
    // must send its commands under that name (D19). Unknown capability keys are ignored.
    const principal = { identity: this.principal.identity, bound: this.principal.bound };
    this.sendFrame({
      type: 'hello',
      versions: [version],
      role: 'both',
      identity: { agent: 'aep-relay' },
      capabilities: { ...this.core.capabilities(), principal },
    });
  }

  private onEvent(m: Record<string, unknown>, text: string, data: Buffer): void {
    const issue = relayCheck(m);
    if (issue !== undefined) {
      const frame: Record<string, unknown> = { type: 'error', code: 'invalid-event', detail: issue.message };
      if (typeof m.id === 'string') frame.cause = m.id;
      this.sendFrame(frame);
      return;
    }
    const event = m as AepEvent;
    const line = oneLine(text);
    // Text without line breaks is served as received: subscribers get these bytes, not a copy encoded per subscriber.
    const incoming: Incoming = line === text ? { event, line, bytes: data } : { event, line };
    if (isCommandType(event.type)) {
      const { refused } = this.core.command(incoming, text, this.principal, this);
      // A refusal on the target's behalf is a frame to the sender, never an event (AEP-0004 §4).
      if (refused) this.sendFrame({ type: 'error', cause: event.id, code: refused.code, detail: refused.detail });
      return;
    }
    const refused = this.core.publish(incoming, this);
    // D19: refused events are never stored or fanned out; only the sender hears why.
    if (refused)
      this.sendFrame({
        type: 'error',
        cause: event.id,
        code: refused.code,
        detail: refused.detail,
        ...(refused.retry === false ? { retry: false } : {}),
      });
  }

  private subscribe(m: Record<string, unknown>): void {
    const id = m.id;
    if (typeof id !== 'string' || id === '') {
      this.sendFrame({ type: 'error', code: 'invalid-filter', detail: 'subscribe needs a string id' });
      return;
    }
    try {
      if (!this.subs.has(id) && this.subs.size >= this.core.limits.maxSubscriptions) {
        throw new SubscribeError(
          'limit-exceeded',
          `at most ${this.core.limits.maxSubscriptions} subscriptions per connection`,
        );
      }
      const spec = parseSubscription({ filter: m.filter, capture: m.capture, from: m.from }, this.core.limits.maxFrom);
      const old = this.subs.get(id);
      if (old) this.core.hub.remove(old);
      const sink: Sink = {
        sub: id,
        channel: this,
        spec,
        delivered: new Map<string, Position>(),
        write: (t, _e, bytes) => (bytes === undefined ? this.sendText(t) : this.sendBytes(bytes)),
        exhausted: (session, earliest) => this.sendFrame({ type: 'replay-exhausted', sub: id, session, earliest }),
      };
      this.subs.set(id, sink);
      this.sendFrame({ type: 'subscribed', id });
      const replayed = this.core.subscribe(sink, spec, { live: true, viewer: this.principal });
      // A store that answers later and then fails: the request's error, in band.
      if (replayed instanceof Promise) {
        // The connection's next frames wait for the replay, so they are answered in order as on
        // a store that answers at once (an `unsubscribe` right after, say, follows the replay).
        this.waiting ??= [];
        replayed
          .catch((err: Error) => {
            const code = this.core.store.unavailable?.() === undefined ? 'internal' : 'store-unavailable';
            this.sendFrame({ type: 'error', id, code, detail: `history unavailable: ${err.message}` });
          })
          .finally(() => {
            const queued = this.waiting ?? [];
            this.waiting = undefined;
            while (queued.length > 0 && this.waiting === undefined) this.onMessage(...queued.shift()!);
            if (this.waiting !== undefined) (this.waiting as [RawData, boolean][]).unshift(...queued);
          });
      }
    } catch (err) {
      if (!(err instanceof SubscribeError)) throw err;
      // In-band and per request: the connection and its other subscriptions carry on (AEP-0003 §6.5).
      this.sendFrame({ type: 'error', id, code: err.code, detail: err.message });
    }
  }

  private unsubscribe(m: Record<string, unknown>): void {
    const sink = typeof m.id === 'string' ? this.subs.get(m.id) : undefined;
    if (sink) {
      this.core.hub.remove(sink);
      this.subs.delete(sink.sub);
    }
    this.sendFrame({ type: 'unsubscribed', id: m.id });
  }

  private roster(m: Record<string, unknown>): void {
    if (this.role === 'emitter') {
      this.sendFrame({
        type: 'error',
        id: m.id,
        code: 'unauthorized',
        detail: 'roster is answered on consumer connections',
      });
      return;
    }
    // `offline: true` (D37) adds the sessions the relay holds history of and no one claims.
    const entries = this.core.roster({ viewer: this.principal, offline: m.offline === true });
    if (!(entries instanceof Promise)) {
      this.sendFrame({ type: 'roster', id: m.id, entries });
      return;
    }
    entries.then(
      (list) => this.sendFrame({ type: 'roster', id: m.id, entries: list }),
      (err: Error) =>
        this.sendFrame({ type: 'error', id: m.id, code: 'internal', detail: `history unavailable: ${err.message}` }),
    );
  }
}
