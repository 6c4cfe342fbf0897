// D45 in the audit: the worker tree on the record. Every session a home session's ack says it
// spawned is described naming its spawner (`spawned_by`); the spawn it names is in the files, sent
// by that identity and acked for that session (the relay forwards a spawn only from a holder of
// the right, so a spawn on the record is the right as far as the record shows), with the parent
// the relay set on it; and each worker ends before its adapter starts again (a restart's recovery
// ends what the last run left open, ahead of the home session's new description).
import type { AepEvent } from '../protocol/envelope.js';
import { isSpawnType, SPAWN_PARENT_ATTR } from '../protocol/types.js';
import type { EventPlace } from './views.js';

export type SpawnRule = 'spawn-unnamed' | 'spawn-right-unshown' | 'spawn-outlived-adapter';

export interface SpawnFinding {
  rule: SpawnRule;
  message: string;
  place: EventPlace;
  eventId: string;
}

interface Seen {
  e: AepEvent;
  place: EventPlace;
  /** Arrival order over every file read, in the order given. */
  n: number;
}

const DESCRIBED = /^x\.[a-z0-9_-]+\.session\.described$/;
const isHome = (session: string | undefined): boolean => session?.startsWith('aep-home-') === true;
const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

export class SpawnCheck {
  private n = 0;
  private readonly spawns = new Map<string, Seen>();
  /** Acks of spawns, by the spawned session. */
  private readonly acked = new Map<string, Seen>();
  /** The first `spawned_by` each session is described with. */
  private readonly named = new Map<string, Seen>();
  private readonly ends = new Map<string, Seen>();
  /** Each home session's descriptions: one per start of its adapter. */
  private readonly starts = new Map<string, Seen[]>();

  /** Takes one event, the first copy only (the audit's ledger drops repeats). */
  see(e: AepEvent, place: EventPlace): void {
    const s: Seen = { e, place, n: this.n++ };
    const session = e.session;
    if (isSpawnType(e.type)) this.spawns.set(e.id, s);
    if (session === undefined) return;
    const worker = e.data?.['session'];
    if (e.type === 'control.accepted' && isHome(session) && typeof worker === 'string') this.acked.set(worker, s);
    else if (DESCRIBED.test(e.type)) {
      if (isHome(session)) this.starts.set(session, [...(this.starts.get(session) ?? []), s]);
      else if (obj(e.data?.['spawned_by']) !== undefined && !this.named.has(session)) this.named.set(session, s);
    } else if (e.type === 'session.ended' && !this.ends.has(session)) this.ends.set(session, s);
  }

  findings(): SpawnFinding[] {
    const out: SpawnFinding[] = [];
    const find = (rule: SpawnRule, at: Seen, message: string): void =>
      void out.push({ rule, message, place: at.place, eventId: at.e.id });
    for (const [worker, ack] of this.acked) {
      if (!this.named.has(worker))
        find(
          'spawn-unnamed',
          ack,
          `session ${worker} was spawned (${ack.e.cause}) but never described with spawned_by`,
        );
      const next = (this.starts.get(ack.e.session!) ?? []).find((s) => s.n > ack.n);
      const end = this.ends.get(worker);
      if (next !== undefined && (end === undefined || end.n > next.n))
        find(
          'spawn-outlived-adapter',
          next,
          `session ${worker}, spawned by this adapter, had not ended when the adapter started again`,
        );
    }
    for (const [worker, at] of this.named) {
      const problem = this.rightProblem(worker, obj(at.e.data?.['spawned_by'])!);
      if (problem !== undefined) find('spawn-right-unshown', at, `session ${worker}: ${problem}`);
    }
    return out;
  }

  /** Why the record does not show the named spawner sending an accepted spawn for `worker`. */
  private rightProblem(worker: string, by: Record<string, unknown>): string | undefined {
    const { identity, command, parent } = by;
    if (typeof identity !== 'string' || typeof command !== 'string')
      return 'spawned_by must name the spawner (identity) and its command';
    const spawn = this.spawns.get(command);
    if (spawn === undefined) return `spawned_by names ${command}, which is no spawn in the files read`;
    if (spawn.e.agent !== identity) return `spawned_by names ${identity}, but ${command} was sent by ${spawn.e.agent}`;
    const ack = this.acked.get(worker);
    if (ack === undefined || ack.e.cause !== command) return `no ack of ${command} names this session`;
    const set = spawn.e[SPAWN_PARENT_ATTR];
    if (parent !== set)
      return `spawned_by names parent ${String(parent ?? 'none')}, the relay set ${String(set ?? 'none')} on ${command}`;
    return undefined;
  }
}
