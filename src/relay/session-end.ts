// D45: who may stop a spawned session (`control.cancel {scope:"session"}`, which ends the worker's
// process): the identity that spawned it, as the session's `spawned_by` says, or a holder of the
// spawn right, who could start one as well. Anyone else is refused here and nothing is forwarded.
import type { AepEvent } from '../protocol/envelope.js';
import type { Principal } from './acl.js';
import type { Refusal } from './types.js';

/** Whether a command ends a whole session (the AEP cancel's `session` scope). */
const endsSession = (cmd: AepEvent): boolean =>
  cmd.type === 'control.cancel' && (cmd.data as { scope?: unknown } | undefined)?.scope === 'session';

/** Undefined when `sender` may send `cmd`; `spawnerOf`: the identity the target's `spawned_by` names. */
export function mayEndSession(
  sender: Principal,
  cmd: AepEvent,
  spawnerOf: (session: string) => string | undefined,
): Refusal | undefined {
  if (!endsSession(cmd) || sender.spawn === true) return undefined;
  const spawner = spawnerOf(cmd.session ?? '');
  if (spawner !== undefined && spawner === sender.identity) return undefined;
  return {
    code: 'unauthorized',
    retry: false,
    detail:
      `${sender.identity} may not stop session ${cmd.session ?? ''}: only ${spawner === undefined ? 'the identity that spawned it' : spawner} ` +
      'or a holder of the spawn right ("spawn": true in the relay\'s tokens file) may; `aep-steer cancel` stops its turn instead',
  };
}
