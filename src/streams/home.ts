// D45: the adapter's home session, the one session a `control.spawn` may target. It holds no
// machine of its own: a spawn command is logged as its input, the spawn runs as an effect (the
// spawner's I/O stays outside the step), and its answer comes back as a logged input that acks
// with the new session's id and describes that session with who spawned it. Replaying the log
// rebuilds what is pending and what runs, so a restart answers or ends each of them once.
import { hostname } from 'node:os';
import { concat, EMPTY, from, map, mergeMap, of, type Observable } from 'rxjs';
import { newId, type AepCommand, type AepEvent, type EventFields, type Rejection } from '../protocol/index.js';
import { CODE_ATTR, isSpawnType, SPAWN_PARENT_ATTR } from '../protocol/types.js';
import { commandKey } from '../machines/gate.js';
import type { SessionInput } from '../machines/session-input.js';
import type { LogRecord } from './log.js';
import type { StampSource } from './stamp.js';
import type { SessionItem, SpawnEffect } from './step-types.js';
import type { Spawner } from './spawner.js';

/** The home session's id: one per adapter host and vendor, so a consumer finds it on the roster. */
export const homeSessionOf = (vendor: string, host = hostname()): string => `aep-home-${vendor}-${host}`;

/** A spawn's answer, as the spawner gives it (the worker's end apart). */
type SpawnAnswer = { ok: true; session: string; cwd: string; worktree?: string } | ({ ok: false } & Rejection);

/** The inputs of the home session, as logged (`{k:'in', s: home, i}`). */
export type HomeInput =
  | { type: 'home.opened'; at: number }
  | { type: 'command.spawn'; at: number; command: AepCommand }
  /** A stop of one worker (`control.cancel {scope:"session"}` sent to it), taken by its home. */
  | { type: 'command.end'; at: number; command: AepCommand }
  | { type: 'spawn.answered'; at: number; key: string; command: string; answer: SpawnAnswer; by: SpawnedBy }
  | { type: 'spawn.ended'; at: number; session: string }
  /**
   * The adapter stops, or `recovered` after a crash: every worker still on record ends, every
   * pending spawn fails (what the crash left unanswered is said as unknown, never as not started).
   */
  | { type: 'home.closed'; at: number; recovered?: true };

interface SpawnedBy {
  identity: string;
  command: string;
  parent?: string;
}

/** Who stopped a worker: the relay-checked sender and the stop command. */
interface StoppedBy {
  identity: string;
  command: string;
}

/** A live step's source and what it collects; absent on replay (nothing is emitted). */
interface Live {
  source: StampSource;
  out: HomeStep;
  /** Whether the session's own `session.ended` is on the stream already (its agent ended it): AEP allows one. */
  ended(session: string): boolean;
}

export interface HomeStep {
  events: AepEvent[];
  records: LogRecord[];
  effects: SpawnEffect[];
  /** Acks recorded by this step (key, exact text), for the host's D4 record and undo. */
  acks: [string, string][];
}

/** The input that announces the home session at each start. */
export const homeOpened = (at: number): SessionInput => ({ type: 'home.opened', at }) as unknown as SessionInput;

const homeInput = (item: SessionItem): HomeInput =>
  item.kind === 'command'
    ? { type: endsSession(item.command) ? 'command.end' : 'command.spawn', at: item.at, command: item.command }
    : ((item.kind === 'input' ? item.input : { type: 'home.opened', at: item.at }) as HomeInput);

/** D45: `control.cancel {scope:"session"}`: the end of a whole session, which only its home can do (a worker's). */
export const endsSession = (c: AepCommand): boolean =>
  c.type === 'control.cancel' && (c.data as { scope?: unknown } | undefined)?.scope === 'session';

/** What a spawn asks for, checked for shape (the spawner checks where and how many). */
function spawnAsk(c: AepCommand): Rejection | undefined {
  const d = (c.data ?? {}) as Record<string, unknown>;
  const bad = (detail: string): Rejection => ({ reason: 'invalid', rule: 'spawn-invalid', detail });
  if (typeof d.prompt !== 'string' || d.prompt.trim() === '') return bad('data.prompt must be non-empty text');
  if (typeof d.cwd !== 'string' || d.cwd === '') return bad('data.cwd must be the absolute directory to run in');
  if (d.worktree !== undefined && typeof d.worktree !== 'boolean' && typeof d.worktree !== 'string')
    return bad('data.worktree must be true or a branch name');
  if (d.model !== undefined && typeof d.model !== 'string') return bad('data.model must be a model name');
  return undefined;
}

export class HomeSession {
  /** Spawn commands whose answer is not in yet, by dedupe key. */
  private readonly pending = new Map<string, AepCommand>();
  /** Workers on record that have not ended on the stream. */
  private readonly workers = new Set<string>();
  /** Workers being stopped by a command, with who asked (said on their `session.ended`). */
  private readonly stopping = new Map<string, StoppedBy>();

  constructor(
    readonly session: string,
    private readonly vendor: string,
  ) {}

  /** Sessions spawned here that have not ended. */
  running(): string[] {
    return [...this.workers];
  }

  /** Replays a logged input: what is pending and what runs, nothing emitted. */
  replay(input: HomeInput): void {
    this.apply(input, undefined);
  }

  /** After replay: a closing to log when the last process left spawns or workers open. */
  recover(at: number): SessionItem | undefined {
    if (this.pending.size === 0 && this.workers.size === 0) return undefined;
    const closed: HomeInput = { type: 'home.closed', at, recovered: true };
    return { kind: 'input', session: this.session, input: closed as unknown as SessionInput };
  }

  step(item: SessionItem, source: StampSource, ended: (session: string) => boolean = () => false): HomeStep {
    const input = homeInput(item);
    const out: HomeStep = { events: [], records: [], effects: [], acks: [] };
    out.records.push({ k: 'in', s: this.session, i: input as unknown as SessionInput });
    this.apply(input, { source, out, ended });
    return out;
  }

  /**
   * A stop of one worker: acked at once on the worker's session (the stop is under way), then the
   * spawner stops it, and its `session.ended` says who stopped it. Only a worker running now can
   * be stopped; a second stop while one runs is told so.
   */
  private end(
    c: AepCommand,
    live: Live | undefined,
    reject: (cause: string, key: string, r: Rejection, session?: string) => void,
    emit: (session: string, f: EventFields, ack?: string) => void,
  ): void {
    const key = commandKey(c);
    const target = c.session ?? '';
    const acked = live?.source.ack(key);
    if (acked !== undefined) {
      live!.out.events.push(JSON.parse(acked) as AepEvent); // D4: the same bytes again
      return;
    }
    const under = this.stopping.get(target);
    if (under?.command === c.id) return; // its ack is out; the end follows
    const no = (rule: Rejection['rule'], detail: string, reason: Rejection['reason'] = 'invalid'): void =>
      reject(c.id, key, { reason, rule, detail }, target);
    if (under !== undefined) {
      no('end-under-way', `${target} is being stopped already (command ${under.command})`, 'busy');
      return;
    }
    if (!this.workers.has(target)) {
      no(
        'end-not-spawned',
        `${target} is not a session this adapter spawned and still runs, so it cannot be stopped here; \`aep-steer cancel\` stops a turn`,
        'unsupported',
      );
      return;
    }
    this.stopping.set(target, { identity: typeof c.agent === 'string' ? c.agent : 'unknown', command: c.id });
    emit(target, { type: 'control.accepted', cause: c.id, data: { stopping: true } }, key);
    live?.out.effects.push({ kind: 'spawn', session: this.session, key, command: c, stop: target });
  }

  /**
   * A worker's end on the stream, once: `session.ended`, or where its agent ended the session
   * itself first (a daemon's shutdown fires SessionEnd) only a stop's record, as
   * `x.{vendor}.session.closed` caused by the stop, so the stop still settles.
   */
  private endWorker(
    s: string,
    by: StoppedBy | undefined,
    reason: 'normal' | 'killed',
    live: Live | undefined,
    emit: (session: string, f: EventFields) => void,
  ): void {
    const end = by === undefined ? { type: 'session.ended', data: { reason } } : stoppedEnd(by);
    if (live?.ended(s) !== true) emit(s, end);
    else if (by !== undefined) emit(s, { ...end, type: `x.${this.vendor}.session.closed` });
  }

  private apply(input: HomeInput, live: Live | undefined): void {
    const emit = (session: string, f: EventFields, ack?: string): void => {
      if (live === undefined) return;
      const e = live.source.emitter(session).emit({ ...f, at: input.at, id: newId(input.at) });
      live.out.events.push(e);
      live.out.records.push(ack === undefined ? { k: 'ev', e } : { k: 'ev', e, ack });
      if (ack !== undefined) live.out.acks.push([ack, JSON.stringify(e)]);
    };
    const reject = (cause: string, key: string, r: Rejection, session = this.session): void =>
      emit(
        session,
        {
          type: 'control.rejected',
          cause,
          capture: 'redacted',
          extensions: { [CODE_ATTR]: r.rule },
          data: { reason: r.reason, detail: r.detail },
        },
        key,
      );
    switch (input.type) {
      case 'home.opened':
        emit(this.session, { type: `x.${this.vendor}.session.described`, data: { lanes: ['spawn'] } });
        return;
      case 'command.spawn': {
        const c = input.command;
        const key = commandKey(c);
        const acked = live?.source.ack(key);
        if (acked !== undefined) {
          live!.out.events.push(JSON.parse(acked) as AepEvent); // D4: the same bytes again
          return;
        }
        if (this.pending.has(key)) return; // its answer is on its way
        const wrong: Rejection | undefined = !isSpawnType(c.type)
          ? {
              reason: 'unsupported',
              rule: 'home-spawn-only',
              detail: `the home session takes spawns only, not ${c.type}`,
            }
          : spawnAsk(c);
        if (wrong !== undefined) {
          reject(c.id, key, wrong);
          return;
        }
        this.pending.set(key, c);
        live?.out.effects.push({ kind: 'spawn', session: this.session, key, command: c });
        return;
      }
      case 'spawn.answered': {
        if (!this.pending.delete(input.key)) return;
        const a = input.answer;
        if (!a.ok) {
          reject(input.command, input.key, a);
          return;
        }
        this.workers.add(a.session);
        // The ack names the new session: the consumer waits and reads it from here on.
        emit(
          this.session,
          {
            type: 'control.accepted',
            cause: input.command,
            data: { session: a.session, cwd: a.cwd, ...(a.worktree === undefined ? {} : { worktree: a.worktree }) },
          },
          input.key,
        );
        emit(a.session, {
          type: `x.${this.vendor}.session.described`,
          data: { cwd: a.cwd, spawned_by: input.by, ...(a.worktree === undefined ? {} : { worktree: a.worktree }) },
        });
        return;
      }
      case 'command.end':
        this.end(input.command, live, reject, emit);
        return;
      case 'spawn.ended': {
        if (!this.workers.delete(input.session)) return;
        const by = this.stopping.get(input.session);
        this.stopping.delete(input.session);
        this.endWorker(input.session, by, 'normal', live, emit);
        return;
      }
      case 'home.closed':
        for (const [key, c] of this.pending)
          reject(c.id, key, {
            reason: 'unsupported',
            rule: 'spawn-failed',
            detail:
              input.recovered === true
                ? 'the adapter ended before it answered this spawn, so no worker of it is on record or followed; spawn again'
                : 'the adapter stopped before the worker started; spawn again',
          });
        this.pending.clear();
        for (const s of this.workers) this.endWorker(s, this.stopping.get(s), 'killed', live, emit);
        this.workers.clear();
        this.stopping.clear();
        return;
    }
  }
}

/** A stopped worker's end: killed, caused by the stop, naming who stopped it. */
const stoppedEnd = (by: StoppedBy): EventFields => ({
  type: 'session.ended',
  cause: by.command,
  data: { reason: 'killed', stopped_by: by },
});

/**
 * Who a spawn names as its spawner: the relay-checked sender (the command's `agent`), the command,
 * and the spawner's own session where the relay named one (`spawnparent`, which the relay sets
 * from the sender's verified claims and refuses from a sender that does not claim it).
 */
const spawnedBy = (c: AepCommand): SpawnedBy => {
  const parent = c[SPAWN_PARENT_ATTR];
  return {
    identity: typeof c.agent === 'string' ? c.agent : 'unknown',
    command: c.id,
    ...(typeof parent === 'string' && parent !== '' ? { parent } : {}),
  };
};

/** Runs a logged spawn: the answer, then (for a worker) its end, come back to the home session. */
export function performSpawn(spawner: Spawner, e: SpawnEffect): Observable<SessionItem> {
  const back = (input: HomeInput): SessionItem => ({
    kind: 'input',
    session: e.session,
    input: input as unknown as SessionInput,
  });
  // A stop: the worker's end comes back through its spawn's `ended` (spawn.ended below).
  if (e.stop !== undefined) return from(spawner.stop(e.stop)).pipe(mergeMap(() => EMPTY));
  const d = e.command.data as { prompt: string; cwd: string; worktree?: boolean | string; model?: string };
  const asked = spawner.spawn({
    prompt: d.prompt,
    cwd: d.cwd,
    commandId: e.command.id,
    ...(d.worktree === undefined ? {} : { worktree: d.worktree }),
    ...(d.model === undefined ? {} : { model: d.model }),
  });
  return from(asked).pipe(
    mergeMap((o) => {
      const by = spawnedBy(e.command);
      const at = Date.now();
      if (!o.ok) return of(back({ type: 'spawn.answered', at, key: e.key, command: e.command.id, answer: o, by }));
      const { ended, ...answer } = o;
      return concat(
        of(back({ type: 'spawn.answered', at, key: e.key, command: e.command.id, answer, by })),
        from(ended).pipe(map(() => back({ type: 'spawn.ended', at: Date.now(), session: o.session }))),
      );
    }),
  );
}

/**
 * The adapter stops: every worker is stopped and gone (no process left), then each ends on the
 * stream once, by its own end or by the closing that ends whatever is left. Waits (bounded) until
 * those ends are released, so they are in the log and on their way before the log closes.
 */
export async function closeHome(
  home: HomeSession,
  spawner: Spawner,
  events$: Observable<AepEvent>,
  feed: (item: SessionItem) => void,
  // Inside the 5 s the adapter's own stop allows itself before it exits (adapter-command.ts).
  boundMs = 3_000,
): Promise<void> {
  const left = new Set(home.running());
  const ended =
    left.size === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const sub = events$.subscribe((e) => {
            if (e.type === 'session.ended' && left.delete(e.session ?? '') && left.size === 0) {
              sub.unsubscribe();
              resolve();
            }
          });
        });
  await spawner.stopAll();
  feed({
    kind: 'input',
    session: home.session,
    input: { type: 'home.closed', at: Date.now() } as unknown as SessionInput,
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ended, new Promise<void>((r) => (timer = setTimeout(r, boundMs)))]);
  clearTimeout(timer);
}
