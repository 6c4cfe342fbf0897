// D48: two keys for a risky yes. A remote allow of a request the policy marked risky is taken and
// acked `pending-second`; only an allow from a second, distinct identity settles it. A deny settles
// at once, from anyone; the person at the agent answers alone (those paths never come here). A
// one-tap link never allows a risky request: the console's link route says `surface: link`.
import type { Rejection } from '../protocol/index.js';
import type { DecidedBy } from './decided-by.js';
import { OPTION_WORDS } from './gate.js';
import type { OpenHold } from './session-context.js';

export type SecondKey =
  | { kind: 'settle' }
  | { kind: 'first' }
  | { kind: 'second'; first: DecidedBy }
  | { kind: 'refuse'; rejection: Rejection };

const SECOND_KEY_REJECT = {
  link: {
    reason: 'refused',
    rule: 'risky-link',
    detail:
      'a one-tap link cannot allow a risky request: open the console (or use aep-steer respond) to allow it; a second person must allow it too',
  },
  sameIdentity: {
    reason: 'refused',
    rule: 'second-approver-same',
    detail:
      'this risky request already has your allow; a second, different identity must allow it (or anyone may deny it)',
  },
} as const satisfies Record<string, Rejection>;

const ALLOWS = new Set((OPTION_WORDS[0] ?? []).map((w) => w.id));

/** Whether `option` (the request's own option id) means allow (D34's option groups). */
export const isAllow = (option: string): boolean => ALLOWS.has(option.toLowerCase());

/** What a remote answer `option` from `by` does to `hold` under D48. */
export function secondKey(hold: OpenHold, option: string, by: DecidedBy): SecondKey {
  if (hold.request.risky === undefined || !isAllow(option)) return { kind: 'settle' };
  if (by.surface === 'link') return { kind: 'refuse', rejection: SECOND_KEY_REJECT.link };
  const first = hold.firstAllow;
  if (first === undefined) return { kind: 'first' };
  if (first.identity === by.identity) return { kind: 'refuse', rejection: SECOND_KEY_REJECT.sameIdentity };
  return { kind: 'second', first };
}
