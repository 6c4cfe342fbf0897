// The console's board: the shared live board, with each session's Stop offer (D33) worked out
// from the relay's roster (what the claimant accepts, which lanes reach the session) and the
// vendor's cancel row, so the page offers Stop only where a way in can stop the turn and says
// why elsewhere. A vendor's table is loaded once, when a session of it first shows.
import { Board, type BoardSession, type BoardSnapshot } from '../consumer/board.js';
import type { RosterEntry } from '../consumer/connection.js';
import { acceptsOf } from '../consumer/roster.js';
import type { CancelRow } from '../adapters/table.js';
import { loadTable } from '../adapters/vendors.js';
import { stopOffer, type StopOffer } from '../adapters/stop-offer.js';

type ConsoleSession = BoardSession & { stop?: StopOffer };

export class StopBoard extends Board {
  private entries: RosterEntry[] = [];
  /** Cancel rows by agent token (null: a vendor without one, or none known by that name). */
  private readonly rows = new Map<string, CancelRow | null>();
  /** Called when a table loaded after a snapshot went out without it. */
  onRows: () => void = () => undefined;

  override setRoster(entries: RosterEntry[]): boolean {
    this.entries = entries;
    for (const r of entries) if (r.agent !== undefined && !this.rows.has(r.agent)) this.load(r.agent);
    return super.setRoster(entries);
  }

  private load(agent: string): void {
    this.rows.set(agent, null);
    void loadTable(agent)
      .then((t) => {
        if (t?.cancel === undefined) return;
        this.rows.set(agent, t.cancel);
        this.onRows();
      })
      .catch(() => undefined);
  }

  override snapshot(): BoardSnapshot {
    const snap = super.snapshot();
    const sessions = snap.sessions.map((s): ConsoleSession => {
      const live = this.entries.filter((r) => r.session === s.session && r.offline !== true);
      // Only one claimant says what the session takes (the page's other controls read it the same way).
      if (live.length !== 1) return s;
      const r = live[0]!;
      const accepts = acceptsOf(r);
      const stop = stopOffer(
        {
          ...(r.agent === undefined ? {} : { agent: r.agent }),
          state: s.state === 'ended' ? 'ended' : (r.state ?? 'live'),
          ...(accepts === undefined ? {} : { accepts }),
          ...(Array.isArray(r.lanes) ? { lanes: r.lanes } : {}),
        },
        r.agent === undefined ? undefined : (this.rows.get(r.agent) ?? undefined),
      );
      return { ...s, stop };
    });
    return { ...snap, sessions };
  }
}
