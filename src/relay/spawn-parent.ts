// D45: the parent of a spawned session, named by the relay alone. A spawn sent by a party that is
// itself a session (an orchestrating agent) is forwarded with the extension attribute
// `spawnparent` set from what the relay verified of the sender: the sessions its own connection
// claims, and for a tokens-file identity the sessions that identity owns. A value the sender wrote
// is taken only when it names one of those; any other is refused, so no sender can put itself
// under (or take credit for) another's session.
import type { AepEvent } from '../protocol/envelope.js';
import { isSpawnType, SPAWN_PARENT_ATTR } from '../protocol/types.js';
import type { Principal } from './acl.js';
import type { Incoming, Refusal } from './types.js';

/** What the relay knows of the sender beyond its principal. */
export interface SenderClaims {
  /** The sessions the sending connection holds (none for an HTTP ingest). */
  own: ReadonlySet<string> | undefined;
  /** The identity owning a session now or within its lease (the claim table). */
  ownerOf(session: string): string | undefined;
}

/** Home sessions spawn; they are never an orchestrator's own session. */
const isHome = (session: string): boolean => session.startsWith('aep-home-');

function verified(sender: Principal, claims: SenderClaims, session: string): boolean {
  if (claims.own?.has(session) === true) return true;
  // A session claimed now under the sender's own identity: a tokens-file identity's own, or for
  // the one-user token a session of that one user (its claimant holds the same token; the claim is
  // the relay's record, the sender only says which of the user's sessions it runs in).
  return claims.ownerOf(session) === sender.identity;
}

/** The parent the relay names, undefined for none, or why the sender's own value is refused. */
function spawnParentOf(
  sender: Principal,
  cmd: AepEvent,
  claims: SenderClaims,
): { parent: string | undefined } | Refusal {
  const asked = cmd[SPAWN_PARENT_ATTR];
  if (asked !== undefined) {
    if (typeof asked === 'string' && asked !== '' && !isHome(asked) && verified(sender, claims, asked))
      return { parent: asked };
    return {
      code: 'unauthorized',
      retry: false,
      detail: `${SPAWN_PARENT_ATTR} names ${JSON.stringify(asked)}, which ${sender.identity} does not claim; leave it out and the relay names the parent from the sender's own session`,
    };
  }
  const own = [...(claims.own ?? [])].filter((s) => !isHome(s));
  // Several sessions on one connection: which is the spawner is the sender's to say, verified above.
  return { parent: own.length === 1 ? own[0] : undefined };
}

/**
 * A spawn as the relay forwards and keeps it: with the parent it verified, re-serialised only
 * when that changes the frame. Any other command is returned as it came.
 */
export function withSpawnParent(sender: Principal, item: Incoming, claims: SenderClaims): Incoming | Refusal {
  if (!isSpawnType(item.event.type)) return item;
  const got = spawnParentOf(sender, item.event, claims);
  if ('code' in got) return got;
  if (got.parent === undefined || item.event[SPAWN_PARENT_ATTR] === got.parent) return item;
  const event: AepEvent = { ...item.event, [SPAWN_PARENT_ATTR]: got.parent };
  return { event, line: JSON.stringify(event) };
}
