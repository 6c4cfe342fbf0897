// What the relay does with one ingested event, and where a command goes (AEP-0004 §4, D17).
// The decisions are pure: the core supplies the claimants (its own and, on a fabric store, other
// nodes') and performs the outcome; `forwardCommand` is the one place a routed frame is sent.
import type { AepEvent } from '../protocol/envelope.js';
import type { RelayRefusalCode } from '../protocol/errors.js';
import { isCommandType } from '../protocol/types.js';
import { GRANT_ATTR } from '../protocol/types.js';
import { mayClaimGrant, mayCommand, maySpawn, type Principal } from './acl.js';
import { storeUnavailable } from './store-fault.js';

/**
 * - `command`: routed to one target, then kept in the session's unpositioned history;
 * - `agent`: agent-scoped, live fan-out only (it has no session);
 * - `unpositioned`: a seq-less session event such as `attention.routed`, kept by arrival;
 * - `positioned`: buffered by `(epoch, seq)` and fanned out.
 */
export type EventClass = 'command' | 'agent' | 'unpositioned' | 'positioned';

export function classify(e: AepEvent): EventClass {
  if (isCommandType(e.type)) return 'command';
  if (e.session === undefined) return 'agent';
  if (e.seq === undefined) return 'unpositioned';
  return 'positioned';
}

/**
 * A connection claims a session by sending a sequenced, non-command event for it (aep-wire §4.4);
 * seq-less foreign events such as `attention.routed` do not claim, so a routing sink never
 * becomes a false claimant.
 */
export const claimsSession = (e: AepEvent): string | undefined =>
  classify(e) === 'positioned' ? e.session : undefined;

/**
 * D19: the events that say what became of a command: acks, instruction and input outcomes, and
 * the attention loop. `attention.routed` is left out: AEP has a foreign routing hop emit it.
 */
export const isOutcomeType = (type: string): boolean =>
  /^(control\.(accepted|rejected)|attention\.(?!routed$)[a-z0-9_.]+|x\.[a-z0-9_-]+\.(instruction|input)\.[a-z0-9_.]+)$/.test(
    type,
  );

export interface Claimant {
  role: 'emitter' | 'consumer' | 'both';
  /** `hello.capabilities.control.accepts`, authoritative when declared (AEP-0004 §4.2). */
  accepts: readonly string[] | undefined;
  claims: ReadonlySet<string>;
}

/**
 * D32: a target that takes a vendor's instruct takes its withdraw, which only takes instructions
 * back; D44: and the queue verbs, which only change what waits.
 */
const WITHDRAW = /^(x\.[a-z0-9_-]+\.control\.)(?:withdraw|edit|move|promote|hold)$/;
export function acceptsType(accepts: readonly string[], type: string): boolean {
  if (accepts.includes(type)) return true;
  const m = WITHDRAW.exec(type);
  return m !== null && accepts.includes(`${m[1]}instruct`);
}

export type Route<T> = { kind: 'forward'; target: T } | { kind: 'refuse'; code: RelayRefusalCode; detail: string };

/** D17/D18 in order: authorization, then exactly one live claimant, then its declared `accepts`. */
export function routeCommand<T extends Claimant>(
  sender: Principal | undefined,
  cmd: Pick<AepEvent, 'type' | 'session'> & { agent?: string; [GRANT_ATTR]?: unknown },
  connections: Iterable<T>,
): Route<T> {
  const session = cmd.session ?? '';
  if (sender === undefined)
    return { kind: 'refuse', code: 'unauthorized', detail: 'control needs an authenticated binding' };
  const verdict = mayCommand(sender, cmd.type, session, cmd.agent);
  if (!verdict.ok) return { kind: 'refuse', code: 'unauthorized', detail: verdict.detail };
  const granted = mayClaimGrant(sender, cmd.type, session, cmd[GRANT_ATTR]);
  if (!granted.ok) return { kind: 'refuse', code: 'unauthorized', detail: granted.detail };
  const spawns = maySpawn(sender, cmd.type);
  if (!spawns.ok) return { kind: 'refuse', code: 'unauthorized', detail: spawns.detail };
  const targets: T[] = [];
  for (const c of connections) if (c.role !== 'consumer' && c.claims.has(session)) targets.push(c);
  if (targets.length === 0)
    return { kind: 'refuse', code: 'no-route', detail: `no live connection claims session ${session}` };
  if (targets.length > 1)
    return { kind: 'refuse', code: 'ambiguous', detail: `${targets.length} live connections claim session ${session}` };
  const target = targets[0]!;
  if (target.accepts !== undefined && !acceptsType(target.accepts, cmd.type)) {
    return { kind: 'refuse', code: 'unsupported', detail: `the target does not accept ${cmd.type}` };
  }
  return { kind: 'forward', target };
}

/** Every claimant a command may reach: this node's peers, then other nodes' (a fabric store). */
export function claimantsAcross<T>(local: Iterable<T>, remote: Iterable<T> | undefined): Iterable<T> {
  return remote === undefined ? local : [...local, ...remote];
}

/**
 * D17 routing over every claimant; D38: no claimant found while other nodes' claims cannot be
 * read (a JetStream election) is the store's outage, not `no-route`: the sender retries.
 */
export function routeAcross<T extends Claimant>(
  sender: Principal,
  cmd: AepEvent,
  claimants: Iterable<T>,
  fabric: { unheard?(): string | undefined } | undefined,
): Route<T> {
  const route = routeCommand(sender, cmd, claimants);
  if (route.kind !== 'refuse' || route.code !== 'no-route') return route;
  const unheard = fabric?.unheard?.();
  return unheard === undefined ? route : { kind: 'refuse', ...storeUnavailable(unheard, "read other nodes' claims") };
}

/**
 * Sends a routed command frame to its claimant: a peer of this node directly, another node's
 * through the fabric, which refuses it `no-route` back to `origin` if the claimant left before
 * the frame got there.
 */
export function forwardCommand<T extends { sendText(text: string): void }>(
  target: T,
  frame: string,
  origin: T | undefined,
  local: { has(peer: T): boolean },
  fabric: { forward(target: T, frame: string, replyTo?: T): void } | undefined,
): void {
  if (fabric !== undefined && !local.has(target)) fabric.forward(target, frame, origin);
  else target.sendText(frame);
}
