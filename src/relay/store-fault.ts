// D38: a store that cannot write says so, and the relay answers for it. What a store may add to
// `SessionStore` for that (both optional, so a store without them keeps its old behaviour), and
// the one refusal every binding gives while it cannot write.

export interface StoreFaults {
  /**
   * Why the store cannot write now (NATS disconnected, a stream without a leader, a full disk),
   * or undefined while it can. Read on every event and command: answer from memory.
   */
  unavailable?(): string | undefined;
  /** What an operator does about failed writes, for the relay's log line (it differs per engine). */
  readonly advice?: string;
}

/** What a store's rejected write means when the store gives no advice of its own (a SQLite file). */
export const FILE_STORE_ADVICE =
  "Free disk space, fix the store file's permissions or end the other process that holds it locked; the relay writes again by itself once a probe write succeeds";

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

/** SQLite's primary result codes for a write the file cannot take now, in words for the refusal. */
const FILE_FAULTS: Record<number, string> = {
  5: 'the store file is locked by another process',
  6: 'the store file is locked',
  8: 'the store file is read-only',
  10: 'a write to the store file failed',
  13: 'the disk holding the store is full',
  14: 'the store file cannot be opened',
};

/**
 * A SQLite error as what it means for the relay: a write the file cannot make now (a full disk,
 * an I/O error, a read-only file), or undefined for anything else (a statement's own fault).
 */
export function fileStoreFault(err: unknown): StoreUnavailableError | undefined {
  const e = err as { errcode?: unknown; errstr?: unknown; message?: unknown } | undefined;
  if (typeof e?.errcode !== 'number') return undefined;
  const what = FILE_FAULTS[e.errcode & 0xff];
  if (what === undefined) return undefined;
  return new StoreUnavailableError(`${what} (${String(e.errstr ?? e.message)})`, { cause: err });
}

export const isStoreUnavailable = (err: unknown): boolean =>
  err instanceof Error && err.name === 'StoreUnavailableError';

export const storeUnavailable = (reason: string, what = 'write') => ({
  code: 'store-unavailable' as const,
  detail: `the relay's store cannot ${what} now (${reason}); send it again shortly`,
});
