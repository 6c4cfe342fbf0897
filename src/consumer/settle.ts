// Settling one command on the stream (design record, "Consumer behavior"): the ack with resends
// of the same id inside the ack window (AEP-0004 §3), then the first event the command caused
// that settles it (delivered, dropped, answered).
import type { AepCommand, AepEvent } from '../protocol/envelope.js';
import type { RelayConsumer, Settlement, SubscribeRequest } from './connection.js';

export interface FollowRequest {
  /**
   * The subscription filter: the session, and the command as `cause` or, where a later command
   * can end this one (a withdraw names it as `subject`, D32), the types that settle it.
   */
  filter: Record<string, unknown>;
  /** Replay from the relay's history too (a retried command may have settled already). */
  from?: SubscribeRequest['from'];
  /** Whether an event naming the command (cause or subject) settles it (delivered, dropped, answered). */
  settles: (e: AepEvent) => boolean;
  /** Whole local wait, ack and settling event together. */
  timeoutMs: number;
  /** Ack window per attempt (AEP-0004 §3 default 10 s); a retry resends the same command. */
  ackWindowMs?: number;
  retries?: number;
  /** Called just before the command is first sent. */
  beforeSend?: () => void;
  /** Called once the ack arrived; `false` returns without waiting for the settling event. */
  afterAck?: (ack: AepEvent) => boolean;
}

export interface Followed {
  settlement: Settlement;
  /** Resends allowed inside the whole wait. */
  retries: number;
  /** The settling event, when it came in time. */
  terminal?: AepEvent;
}

/** Sends `cmd` on an open consumer connection, then waits for the event that settles it. */
export async function sendAndFollow(consumer: RelayConsumer, cmd: AepCommand, req: FollowRequest): Promise<Followed> {
  let terminal: AepEvent | undefined;
  let wake: (() => void) | undefined;
  const watch = await consumer.subscribe(
    { filter: req.filter, ...(req.from ? { from: req.from } : {}) },
    {
      onEvent: (e) => {
        if ((e.cause !== cmd.id && e.subject !== cmd.id) || terminal || !req.settles(e)) return;
        terminal = e;
        wake?.();
      },
    },
  );
  const started = Date.now();
  try {
    const windowMs = Math.max(1, Math.min(req.ackWindowMs ?? 10_000, req.timeoutMs));
    const retries = Math.max(0, Math.min(req.retries ?? 2, Math.floor(req.timeoutMs / windowMs) - 1));
    req.beforeSend?.();
    const settlement = await consumer.send(cmd, { timeoutMs: windowMs, retries });
    if (settlement.outcome !== 'accepted' || req.afterAck?.(settlement.ack) === false) return { settlement, retries };
    const left = req.timeoutMs - (Date.now() - started);
    if (!terminal && left > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
    const settled = terminal as AepEvent | undefined;
    return settled === undefined ? { settlement, retries } : { settlement, retries, terminal: settled };
  } finally {
    watch.close();
  }
}
