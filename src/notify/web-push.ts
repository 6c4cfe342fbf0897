// Web Push to paired devices, content-free: when a session starts waiting for a person, each
// subscribed device gets one push, encrypted for it (RFC 8291, aes128gcm) and signed with this
// install's VAPID key (made on first use, kept in the state directory, mode 600), sent with
// `urgency: high` (iOS defers anything less). The payload says only that something waits and
// which console path to open: no session title, tool, command or working directory, whatever
// the capture level, so the push service learns that something waits and nothing else. A
// subscription the push service no longer knows (404, 410) is removed. ntfy and webhook targets
// are the Notifier's; this runs beside it.
import { readFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import { join } from 'node:path';
import webpush from 'web-push';
import type { AepEvent } from '../protocol/envelope.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  subject: string;
}

/** The install's VAPID keys, made and written (mode 600) the first time they are asked for. */
export function vapidKeys(env: NodeJS.ProcessEnv = process.env): VapidKeys {
  const path = join(stateDir(env), 'vapid.json');
  try {
    const k = JSON.parse(readFileSync(path, 'utf8')) as VapidKeys;
    if (typeof k.publicKey === 'string' && typeof k.privateKey === 'string' && typeof k.subject === 'string') return k;
  } catch {
    // none yet (or unreadable): a new pair replaces it; old subscriptions then fail and are dropped
  }
  const made = webpush.generateVAPIDKeys();
  const keys: VapidKeys = { ...made, subject: 'mailto:aep-steer@localhost' };
  writePrivateFile(path, `${JSON.stringify(keys, null, 2)}\n`);
  return keys;
}

export interface WebPushTarget {
  name: string;
  sub: { endpoint: string; keys: { p256dh: string; auth: string } };
}

export interface WebPusherOptions {
  vapid(): VapidKeys;
  /** Subscriptions of the devices paired now. */
  subscriptions(): WebPushTarget[];
  drop(name: string, endpoint: string): void;
  /** The console path (relative to its root) that opens a request on a device. */
  path(session: string, request: string): string;
  warn(message: string): void;
  graceMs?: number;
  /** TLS agent for the push service (tests trust a local stand-in with it). */
  agent?: Agent;
}

/** The whole payload: what waits is found by opening `path` on the console, behind the device's token. */
const pushPayload = (path: string): string => JSON.stringify({ kind: 'waiting', path });

const ENDS = new Set(['attention.answered', 'attention.resolved', 'attention.timeout']);
const GONE = new Set([404, 410]);
/** How long the push service keeps an undelivered push: a request rarely waits longer. */
const TTL_S = 600;

export class WebPusher {
  private armed = false;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly sent = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly opts: WebPusherOptions) {}

  /** The replay is through: requests from now on are news (history is never pushed). */
  arm(): void {
    this.armed = true;
  }

  observe(e: AepEvent): void {
    if (ENDS.has(e.type) && typeof e.subject === 'string') {
      clearTimeout(this.timers.get(e.subject));
      this.timers.delete(e.subject);
      this.sent.add(e.subject);
      return;
    }
    if (!this.armed || e.type !== 'attention.requested' || e.session === undefined) return;
    if (this.sent.has(e.id) || this.timers.has(e.id)) return;
    const session = e.session;
    // A request answered within the grace (at the agent, by another consumer) is not pushed.
    const t = setTimeout(() => {
      this.timers.delete(e.id);
      this.sent.add(e.id);
      if (this.sent.size > 10_000) this.sent.delete(this.sent.values().next().value!);
      this.sendAll(this.opts.path(session, e.id));
    }, this.opts.graceMs ?? 300);
    t.unref();
    this.timers.set(e.id, t);
  }

  private sendAll(path: string): void {
    const keys = this.opts.vapid();
    for (const target of this.opts.subscriptions()) {
      const p = this.sendOne(target, path, keys);
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  private async sendOne(target: WebPushTarget, path: string, keys: VapidKeys): Promise<void> {
    try {
      await webpush.sendNotification(target.sub, pushPayload(path), {
        vapidDetails: keys,
        urgency: 'high',
        TTL: TTL_S,
        contentEncoding: 'aes128gcm',
        timeout: 10_000,
        ...(this.opts.agent ? { agent: this.opts.agent } : {}),
      });
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status !== undefined && GONE.has(status)) {
        this.opts.drop(target.name, target.sub.endpoint);
        this.opts.warn(`push: ${target.name}'s subscription is gone at its push service (${status}); removed`);
        return;
      }
      this.opts.warn(
        `push: could not notify ${target.name} (${status ?? (err as Error).message}); the console goes on`,
      );
    }
  }

  async close(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.inflight]);
  }
}
