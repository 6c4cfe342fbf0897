// D38: a store that cannot write says so, and the relay answers for it. What a store may add to
// `SessionStore` for that (both optional, so a store without them keeps its old behaviour), and
// the one refusal every binding gives while it cannot write.
import type { SessionStore } from './store.js';

export interface StoreFaults {
  /**
   * Why the store cannot write now (NATS disconnected, a stream without a leader, a full disk),
   * or undefined while it can. Read on every event and command: answer from memory.
   */
  unavailable?(): string | undefined;
  /** What an operator does about failed writes, for the relay's log line (it differs per engine). */
  readonly advice?: string;
}

export type FaultAwareStore = SessionStore & StoreFaults;

/** What a store's rejected write means when the store gives no advice of its own (a SQLite file). */
export const FILE_STORE_ADVICE = "Free disk space or fix the store file's permissions, then restart the relay";

/**
 * A write the store could not make now (as opposed to one it refuses for good): its senders
 * are refused `store-unavailable` and resend. Recognised by name, so it survives a worker
 * thread's error cloning; a SQLite store may throw it for a full disk or a busy file.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export const isStoreUnavailable = (err: unknown): boolean =>
  err instanceof Error && err.name === 'StoreUnavailableError';

export const storeUnavailable = (reason: string, what = 'write') => ({
  code: 'store-unavailable' as const,
  detail: `the relay's store cannot ${what} now (${reason}); send it again shortly`,
});
