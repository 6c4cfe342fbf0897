// Claims (D17, D23): a session is claimed by its first event on a connection; after a reconnect
// or restart each session the log knows, ended ones included, is claimed once by redelivering its
// last event, after the resend caught up, unless an event of it went out on the connection
// already. A session whose last event the relay refused for good is not claimed with it.
import { eventText, type AepEvent } from '../protocol/index.js';
import { posOf } from './outbox-state.js';

export class SessionClaims {
  /** Each session's last event as logged: the claim frame after a reconnect. */
  private readonly last = new Map<string, string>();
  private readonly sources = new Map<string, string>();
  /** Sessions still to be claimed on this connection, in order. */
  private queue: string[] = [];
  /** A hello's claims are still to be queued (after the resend caught up). */
  private pending = false;
  /** Sessions an event of which went out on this connection. */
  private claimedHere = new Set<string>();

  /** A logged event seen while rebuilding from a snapshot or the log (no sending). */
  restore(e: AepEvent): void {
    if (posOf(e)) this.last.set(e.session!, eventText(e));
  }

  lastEvents(): Record<string, string> {
    return Object.fromEntries(this.last);
  }

  restoreLast(last: Record<string, string>): void {
    for (const [s, t] of Object.entries(last)) this.last.set(s, t);
  }

  /** A positioned event of session `s` became durable in the log. */
  logged(s: string, text: string): void {
    this.last.set(s, text);
  }

  /** A positioned event of session `s` went out on this connection: that claims it. */
  sent(s: string): void {
    this.claimedHere.add(s);
  }

  /** A new connection: nothing is claimed on it yet. */
  connected(): void {
    this.claimedHere = new Set();
  }

  disconnected(): void {
    this.queue = [];
    this.pending = false;
  }

  /** After a hello's learn: claim every session the resend does not, once it caught up. */
  afterResend(): void {
    this.pending = true;
  }

  /** Claims wait to be sent. */
  queued(): boolean {
    return this.queue.length > 0;
  }

  /**
   * The resend caught up: the hello's claims are queued now (true), or were already (false).
   */
  queueAfterResend(): boolean {
    if (!this.pending) return false;
    this.pending = false;
    this.queue = [...this.last.keys()].filter((s) => !this.claimedHere.has(s));
    return true;
  }

  /**
   * The next claim frame to send, or undefined for a session that needs none (claimed here
   * already, or its last event refused for good); call while `queued()`.
   */
  next(refusedForGood: (s: string, text: string) => boolean): { s: string; text: string } | undefined {
    const s = this.queue.shift()!;
    const text = this.last.get(s);
    if (text === undefined || this.claimedHere.has(s) || refusedForGood(s, text)) return undefined;
    return { s, text };
  }

  /** The source of the session's events in this log (one per session and host). */
  sourceOf(s: string): string | undefined {
    let source = this.sources.get(s);
    if (source === undefined) {
      const text = this.last.get(s);
      if (text === undefined) return undefined;
      source = (JSON.parse(text) as AepEvent).source;
      this.sources.set(s, source);
    }
    return source;
  }
}
