// The relay's refusals of what the outbox sent. The relay answers an event it will not take
// with an `error` frame naming it. One that resending cannot change (no emit right for the
// token, `retry: false`; an invalid event) settles the event as refused: recorded in the state
// file, said once, never resent, no longer holding back compaction. Any other refusal (a rival
// claim until its lease lapses, the relay's store unable to write) is retried, backing off.
import { SteeringError, type AepEvent } from '../protocol/index.js';
import { after, posOf, type Position } from './outbox-state.js';

/** First and longest wait before events a relay refused for now are sent again on the same link. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/**
 * The longest wait while the relay's store cannot write (D38 `store-unavailable`): it comes back
 * within a cluster's election, so history is filled again seconds after it does, not a minute.
 */
const STORE_RETRY_MAX_MS = 2000;

export class Refusals {
  /** Per session, the last position the relay refused for good (durable, in the state file). */
  readonly refusedAt = new Map<string, Position>();
  /** Sessions whose lasting refusal was said (once per run). */
  private readonly told = new Set<string>();
  /** Sessions refused for now on this connection: said once, sent again after `retryMs`. */
  private readonly refusedNow = new Set<string>();
  private retryMs = RETRY_FIRST_MS;
  private retryAt = 0;
  /** The last for-now refusal was the relay's store being unable to write (D38). */
  private storeDown = false;

  constructor(
    /** The adapter's agent token, named in the remedy for a missing emit right. */
    private readonly vendor: string,
    private readonly onError: (e: SteeringError) => void,
    /** An event was refused for good: the outbox counts it, records it soon and learns again. */
    private readonly settled: () => void,
  ) {}

  /** What the relay holds (`held`) or refused for good of session `s`: nothing up to here is sent again. */
  settledAt(s: string, held: Position | undefined): Position | undefined {
    const refused = this.refusedAt.get(s);
    if (!refused) return held;
    return held && !after(refused, held) ? held : refused;
  }

  /** The session's last event is one the relay refused for good: claiming with it would be refused again. */
  lastRefused(s: string, text: string): boolean {
    const refused = this.refusedAt.get(s);
    const p = refused && posOf(JSON.parse(text) as AepEvent);
    return p !== undefined && !after(p, refused!);
  }

  /** The session's last event is past what was refused for good: its refusal need not be kept. */
  outgrown(s: string, last: Position): void {
    const refused = this.refusedAt.get(s);
    if (refused && after(last, refused)) this.refusedAt.delete(s);
  }

  /** Refusals only ever name events of the connection that is gone. */
  connectionLost(): void {
    this.refusedNow.clear();
  }

  /** After a learn: whether what the relay refused for now is due to be sent again. */
  retryDue(): boolean {
    return this.refusedNow.size > 0 && Date.now() >= this.retryAt;
  }

  /** Sends again what the relay still lacks, backing off while it keeps refusing. */
  retry(): void {
    this.refusedNow.clear();
    this.retryAt = Date.now() + this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.storeDown ? STORE_RETRY_MAX_MS : RETRY_MAX_MS);
  }

  /** The relay holds everything up to the learn's target: the next refusal starts the backoff afresh. */
  covered(): void {
    this.retryMs = RETRY_FIRST_MS;
    this.storeDown = false;
  }

  /** An `error` frame naming an event this link wrote (`sent`, if positioned): settled for good, or sent again later. */
  refused(f: Record<string, unknown>, sent: { session: string; p: Position } | undefined): void {
    const code = String(f.code);
    const detail = typeof f.detail === 'string' ? f.detail : '';
    // Envelope checks do not change for the same bytes; an emit right only with a new tokens file.
    const lasting = f.retry === false || code === 'invalid-event';
    if (!sent) {
      // Sent live only (agent.health, a repeated ack): nothing to settle, said once per code.
      if (this.told.has(`\u0000${code}`)) return;
      this.told.add(`\u0000${code}`);
      this.onError(
        new SteeringError(
          'RELAY_REFUSED',
          `the relay refused an event sent to it live (agent health or a repeated ack; ${code}${detail ? `: ${detail}` : ''}). ${lasting ? this.remedy(code) : 'Such events are not resent.'}`,
        ),
      );
      return;
    }
    const s = sent.session;
    if (!lasting) {
      this.storeDown = code === 'store-unavailable';
      if (this.storeDown && this.retryMs > STORE_RETRY_MAX_MS) this.retryMs = STORE_RETRY_MAX_MS;
      if (this.refusedNow.has(s)) return;
      this.refusedNow.add(s);
      if (this.retryAt < Date.now()) this.retryAt = Date.now() + this.retryMs;
      this.onError(
        new SteeringError(
          'RELAY_REFUSED',
          `the relay refused events of session ${s} for now (${code}${detail ? `: ${detail}` : ''}); the adapter keeps them and sends them again`,
        ),
      );
      return;
    }
    const before = this.refusedAt.get(s);
    if (before && !after(sent.p, before)) return;
    this.refusedAt.set(s, sent.p);
    this.settled();
    if (this.told.has(s)) return;
    this.told.add(s);
    this.onError(
      new SteeringError(
        'RELAY_REFUSED',
        `the relay refused the events of session ${s} (${code}${detail ? `: ${detail}` : ''}); they stay in this adapter's log and are not sent again. ${this.remedy(code)}`,
      ),
    );
  }

  private remedy(code: string): string {
    return code === 'invalid-event'
      ? 'Run the same aep-steering version for the relay and the adapter.'
      : `Give this adapter's token emit rights for ${this.vendor} in the relay's tokens file ("emit": ["${this.vendor}"]) and restart the relay; events from then on reach it.`;
  }
}
