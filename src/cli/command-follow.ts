// Sending one command as a consumer and following it on the stream (design record, "Consumer
// behavior"): who may take it (the roster), the ack with resends of the same id inside the ack
// window (AEP-0004 §3), then the first event the command caused that settles it.
import type { AepCommand, AepEvent } from '../protocol/envelope.js';
import type { RelayConsumer, RosterEntry, Settlement } from '../relay/consumer.js';

/** The one claimant of a session, or a refusal that says why a command could not be routed (AEP-0004 §4.4). */
export function claimantOf(roster: RosterEntry[], session: string): { entry: RosterEntry } | { code: 'no-route' | 'ambiguous'; detail: string } {
  const entries = roster.filter((r) => r.session === session);
  if (entries.length === 0) return { code: 'no-route', detail: `session ${session} has no live claimant on the relay` };
  if (entries.length > 1) return { code: 'ambiguous', detail: `session ${session} is claimed by ${entries.length} connections` };
  return { entry: entries[0]! };
}

export const acceptsOf = (entry: RosterEntry): string[] | undefined => {
  const accepts = (entry.control as { accepts?: unknown } | undefined)?.accepts;
  return Array.isArray(accepts) ? accepts.filter((t): t is string => typeof t === 'string') : undefined;
};

export interface FollowRequest {
  /** The subscription filter; it names the session and the command as `cause`. */
  filter: Record<string, unknown>;
  /** Whether an event caused by the command settles it (delivered, dropped, answered). */
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
  const watch = await consumer.subscribe({ filter: req.filter }, {
    onEvent: (e) => {
      if (e.cause !== cmd.id || terminal || !req.settles(e)) return;
      terminal = e;
      wake?.();
    },
  });
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
