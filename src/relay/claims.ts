// Who owns a session on the relay (D19). A connection claims a session by sending a sequenced
// event for it; a live claim owns the session against every other connection, and after the
// claimant goes away the claim lapses at once for its own identity and after a lease for any
// other, so nobody can take over a session while its adapter restarts. Pure apart from the clock.
import type { Principal } from './acl.js';

/** The lease a claim keeps after its connection closed, stated in discovery (`claims.lease_ms`). */
export const DEFAULT_CLAIM_LEASE_MS = 30_000;

/** What the claim table needs of a connection. */
export interface ClaimHolder {
  principal: Principal;
  claims: Set<string>;
}

interface Claim<H> {
  holders: Set<H>;
  identity: string;
  /** Set once the last holder closed: other identities may claim from this time on. */
  lapsesAt?: number;
}

export type ClaimVerdict = { ok: true; fresh: boolean } | { ok: false; detail: string };

/** A holder's own claim again: the answer to nearly every sequenced event, shared rather than made each time. */
const HELD: ClaimVerdict = Object.freeze({ ok: true, fresh: false });

export class ClaimTable<H extends ClaimHolder> {
  private readonly claims = new Map<string, Claim<H>>();

  constructor(
    readonly leaseMs: number = DEFAULT_CLAIM_LEASE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Asks for `session` on behalf of `holder`. One-user parties (the shared token, a tokenless
   * relay) may hold one session on several connections at once, which routing answers `ambiguous`
   * (AEP-0004 §4); a bound identity's live claim is its own.
   */
  claim(session: string, holder: H): ClaimVerdict {
    if (holder.claims.has(session)) return HELD;
    const c = this.current(session);
    const identity = holder.principal.identity;
    if (c !== undefined && c.holders.size > 0) {
      const shareable = !holder.principal.bound && c.identity === identity;
      if (!shareable) return { ok: false, detail: `session ${session} is claimed by another live connection` };
    } else if (c !== undefined && c.identity !== identity) {
      const left = c.lapsesAt! - this.now();
      return {
        ok: false,
        detail: `session ${session} was claimed by another identity; its claim lapses in ${Math.ceil(left / 1000)} s`,
      };
    }
    const next = c ?? { holders: new Set<H>(), identity };
    next.identity = identity;
    delete next.lapsesAt;
    next.holders.add(holder);
    this.claims.set(session, next);
    holder.claims.add(session);
    return { ok: true, fresh: true };
  }

  /** True when `holder` is a live claimant of `session` (outcome events come only from one, D19). */
  holds(session: string, holder: H): boolean {
    return this.claims.get(session)?.holders.has(holder) === true;
  }

  /** The identity that owns `session` now or within its lease (HTTP ingest may speak only as it). */
  ownerOf(session: string): string | undefined {
    return this.current(session)?.identity;
  }

  /** True when `session` has a live claimant of an identity other than `identity`. */
  heldByOther(session: string, identity: string): boolean {
    const c = this.current(session);
    return c !== undefined && c.identity !== identity;
  }

  /** The holder closed: each of its claims lapses after the lease once no other holder is left. */
  release(holder: H): void {
    const at = this.now() + this.leaseMs;
    for (const session of holder.claims) {
      const c = this.claims.get(session);
      if (c === undefined) continue;
      c.holders.delete(holder);
      if (c.holders.size === 0) c.lapsesAt = at;
    }
    holder.claims.clear();
    if (this.claims.size > 1024) this.sweep();
  }

  private current(session: string): Claim<H> | undefined {
    const c = this.claims.get(session);
    if (c === undefined) return undefined;
    if (c.holders.size === 0 && c.lapsesAt! <= this.now()) {
      this.claims.delete(session);
      return undefined;
    }
    return c;
  }

  /** Forgets lapsed claims so the table stays as large as the live set plus one lease of history. */
  private sweep(): void {
    for (const session of [...this.claims.keys()]) this.current(session);
  }
}
