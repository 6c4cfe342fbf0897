// D33: whether Stop may be offered for a session, from what the relay's roster says of it (the
// claimant's `accepts`, the session's `lanes`) and its vendor's cancel row. An adapter declares
// `control.cancel` for all its sessions when one of its lanes can stop a turn, yet a session that
// lane does not reach (a person's `claude` or `codex` in a terminal: the hook lane only) cannot
// be stopped: Stop is not offered there, and the reason says how to get a way in that can.
import type { CancelRow } from './table.js';

/** What the roster says of a session (a board or roster row). */
export interface StopView {
  agent?: string;
  state?: string;
  accepts?: readonly string[];
  /** D30: the lanes reaching the session, as its adapter last described them; absent: the adapter has none. */
  lanes?: readonly string[];
}

export type StopOffer =
  | { offered: true }
  | { offered: false; code: 'session-ended' | 'unsupported' | 'lane-unreached'; why: string };

const HOOK = 'hook';

export function stopOffer(s: StopView, row: CancelRow | undefined): StopOffer {
  if (s.state === 'ended')
    return { offered: false, code: 'session-ended', why: 'The session has ended: no turn runs.' };
  const who = s.agent ?? 'its agent';
  if (!(s.accepts ?? []).includes('control.cancel')) {
    return {
      offered: false,
      code: 'unsupported',
      why:
        row === undefined
          ? `Nothing can stop a turn of ${who} from here: its adapter has no way to.`
          : `Its adapter takes no cancel; to be able to stop turns of ${who}, ${row.enable}.`,
    };
  }
  const native = (s.lanes ?? []).filter((l) => l !== HOOK);
  // A row's lanes are what stops a turn; an adapter that declares lanes but reaches the session by hooks alone cannot.
  const byLane = row === undefined ? s.lanes !== undefined : row.by.some((b) => b !== 'user-plane');
  if (byLane && s.lanes !== undefined && !native.some((l) => row === undefined || row.by.includes(l))) {
    return {
      offered: false,
      code: 'lane-unreached',
      why: `This session runs on the hook lane only, which cannot stop a turn${row === undefined ? '.' : `; to be able to stop its turns, ${row.how}.`}`,
    };
  }
  return { offered: true };
}
