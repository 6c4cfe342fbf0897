// Admission control: whether the relay takes an event at all, decided before anything of it
// happens. D19: emit rights (the ACL, acl.ts) and session claims (claims.ts) say who may speak
// for a session; D38: nothing that needs the store is taken while it cannot write, and a
// connection's event refused for now holds back its session's later ones (unstored.ts).
import type { AepEvent } from '../protocol/envelope.js';
import { mayEmit, type Principal } from './acl.js';
import type { ClaimTable } from './claims.js';
import { classify, claimsSession, isOutcomeType } from './routing.js';
import { storeUnavailable } from './store-fault.js';
import type { FaultAwareStore, Position } from './session-store.js';
import type { Peer, Refusal } from './types.js';
import { Unstored } from './unstored.js';

export class AdmissionControl {
  /** D38: per connection, a session's first event refused for now; its later ones wait for it. */
  private readonly unstored = new Unstored<Peer>();

  constructor(
    private readonly store: FaultAwareStore,
    private readonly claims: ClaimTable<Peer>,
  ) {}

  /**
   * D19, the one place that decides whether a party may publish a non-command event: it needs
   * emit rights for the event's agent and session; over WebSocket a sequenced event claims the
   * session for its connection (refused while another owns it); over HTTP, which never claims,
   * it may not speak for a session another identity owns; outcome events of the control loop
   * come only from the session's claimant. A refusal leaves no trace: no claim, no admission.
   */
  authorize(e: AepEvent, who: Principal, origin?: Peer): Refusal | undefined {
    const emit = mayEmit(who, e.agent, e.session);
    // Only a new tokens file changes this answer; a claim refusal below lapses with its lease.
    if (!emit.ok) return { code: 'unauthorized', detail: emit.detail, retry: false };
    const session = e.session;
    if (session === undefined) return undefined;
    if (origin !== undefined) {
      if (claimsSession(e) !== undefined) {
        // Another node's claim counts as this node's own would (a fabric store).
        const rival = origin.claims.has(session) ? undefined : this.store.fabric?.rival(session, who);
        if (rival !== undefined) return { code: 'unauthorized', detail: rival };
        const v = this.claims.claim(session, origin);
        if (!v.ok) return { code: 'unauthorized', detail: v.detail };
        if (v.fresh) this.store.fabric?.claim(origin, session);
      }
      if (isOutcomeType(e.type) && !this.claims.holds(session, origin)) {
        return {
          code: 'unauthorized',
          detail: `${e.type} for session ${session} is accepted only from the session's claimant`,
        };
      }
      return undefined;
    }
    const owner = this.claims.ownerOf(session) ?? this.store.fabric?.ownerOf(session);
    if (owner !== undefined && owner !== who.identity) {
      return { code: 'unauthorized', detail: `session ${session} is owned by another identity's claim` };
    }
    // A one-user relay (shared token, no token) may import history for a session nobody claims.
    if (isOutcomeType(e.type) && owner === undefined && who.bound) {
      return {
        code: 'unauthorized',
        detail: `${e.type} for session ${session} is accepted only from the session's claimant, and it has none`,
      };
    }
    return undefined;
  }

  /**
   * One event from a WS connection: authorized (D19), then refused for now if it needs the store
   * and the store cannot write, or an earlier event of its session from `origin` is not stored
   * yet. The claim is taken even while the store is down, so commands find the session's
   * claimant once it is back; agent-scoped events are not stored and go out meanwhile.
   */
  admit(e: AepEvent, origin: Peer): Refusal | undefined {
    const cls = classify(e);
    const stored = cls !== 'agent';
    const pos = () => ({ epoch: e.epoch ?? 0, seq: e.seq! });
    const held = cls === 'positioned' && this.unstored.any();
    const waits = held ? this.unstored.waits(origin, e.session!, pos()) : undefined;
    const refused =
      this.authorize(e, origin.principal, origin) ??
      (stored ? (this.unwritable() ?? (waits === undefined ? undefined : storeUnavailable(waits))) : undefined);
    if (refused) {
      if (cls === 'positioned' && refused.code === 'store-unavailable') this.holdBack(origin, e.session!, pos());
      return refused;
    }
    // Taken in order: what follows it is written after it (a failed write refuses both again).
    if (held) this.unstored.taken(origin, e.session!, pos());
    return undefined;
  }

  /** D38: the store says it cannot write now, so nothing that needs it is taken (the sender retries). */
  unwritable(): Refusal | undefined {
    const reason = this.store.unavailable?.();
    return reason === undefined ? undefined : storeUnavailable(reason);
  }

  /**
   * A positioned event refused for now holds back its session's later ones from `peer`, unless
   * the store holds its position or a later one already (a claim's redelivery of the last event,
   * a repeated ack): the sender's resend starts after that anyway, and would never fill the hold.
   */
  holdBack(peer: Peer, session: string, pos: Position): void {
    if (this.store.holdsFrom?.(session, pos) !== true) this.unstored.refused(peer, session, pos);
  }

  /** The connection closed: nothing of it is held back any longer. */
  leave(peer: Peer): void {
    this.unstored.leave(peer);
  }
}
