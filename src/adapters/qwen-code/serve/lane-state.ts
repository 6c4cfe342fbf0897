// What the qwen serve lane keeps (lane.ts): the daemon's state, each session it follows, each
// instruction it holds for the daemon, and how much of each it remembers.
import type { Subscription } from 'rxjs';
import type { SteeringError } from '../../../protocol/index.js';
import type { ServeOption } from './maps.js';

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
