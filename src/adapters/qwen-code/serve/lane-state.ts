// What the qwen serve lane keeps (lane.ts): the daemon's state, each session it follows, each
// instruction it holds for the daemon, and how much of each it remembers.
import type { Subscription } from 'rxjs';
import type { SteeringError } from '../../../protocol/index.js';
import type { ServeOption } from './maps.js';
import type { ServeClientOptions } from './client.js';

export type Health = { kind: 'starting' } | { kind: 'up' } | { kind: 'down' | 'refused'; error: SteeringError };

export interface Followed {
  sub: Subscription;
  attached: boolean;
  turn?: string;
  ended: Set<string>;
  options: Map<string, ServeOption[]>;
}

export interface Held {
  session: string;
  text: string;
  via: 'steer' | 'queue';
  ref: string;
}

/** Ended turns remembered per session, so late frames of them start nothing. */
export const ENDED_KEPT = 64;
/** How long a withdraw waits for the stream to say a queued prompt was removed (it is said at once). */
export const REMOVED_WAIT_MS = 5000;
/** Receipts remembered, so a resend after one is answered without sending again (the core dedupes too, D4). */
export const DELIVERED_KEPT = 4096;

export interface QwenServeLaneOptions extends ServeClientOptions {
  /** How often the live sessions are listed while the daemon answers (default 1 s). */
  pollMs?: number;
  /** First retry delay while it does not, doubled up to `maxRetryMs` (defaults 250 ms, 10 s). */
  retryMs?: number;
  maxRetryMs?: number;
  /** One message per change of the daemon's state (down, refused, back), never one per retry. */
  onError?: (e: SteeringError) => void;
  now?: () => number;
}

/** What `interrupt` did: the cancel, and the held instructions it took back first. */
export type InterruptResult = { ok: true; withdrawn: string[] } | { ok: false; detail: string };

/** Whether the daemon's `pending-prompts` answer lists the prompt as queued (waiting for a turn to end). */
export const queuedIn = (body: unknown, promptId: string): boolean =>
  (body as { pendingPrompts?: { promptId?: string; state?: string }[] } | undefined)?.pendingPrompts?.some(
    (p) => p.promptId === promptId && p.state === 'queued',
  ) === true;

/**
 * D43: where a start's prompt stands: begun or about to (`no`); queued only behind the turn that
 * was ending when it was sent (`behind-ending`: the turn after that one is its own); behind another
 * (`behind-other`: a turn begun meanwhile, so a queue). `listed`: the daemon's queue (absent when
 * it did not answer); `stream`: whether it showed the prompt queued, and the turn that ran just
 * before it, once it began.
 */
export type Standing = 'no' | 'behind-ending' | 'behind-other';
export function standing(
  listed: unknown,
  promptId: string,
  ending: string | undefined,
  stream: { queued: boolean; before?: string | undefined },
): Standing {
  if (listed === undefined || !queuedIn(listed, promptId)) {
    if (!stream.queued) return 'no';
    return ending !== undefined && stream.before === ending ? 'behind-ending' : 'behind-other';
  }
  const list = (listed as { pendingPrompts?: { promptId?: string }[] }).pendingPrompts ?? [];
  const ahead = list.slice(
    0,
    list.findIndex((p) => p.promptId === promptId),
  );
  return ending !== undefined && ahead.every((p) => p.promptId === ending) ? 'behind-ending' : 'behind-other';
}
