// D45: the adapter's side of `control.spawn`, apart from any vendor. A spawn is checked whole
// before anything starts (where it may run, a place under the cap, the worktree it asks for), then
// the vendor's launcher starts the worker; the answer names the new session. Every worker this
// spawner started is stopped when the adapter stops, so none outlives it.
import type { Rejection } from '../protocol/index.js';
import { checkSpawnCwd, makeWorktree, planWorktree, realRoots, SpawnSlots } from './spawn-place.js';

/** What a spawn asks for, as `x.{vendor}.control.spawn` carries it. */
interface SpawnRequest {
  prompt: string;
  cwd: string;
  worktree?: boolean | string;
  model?: string;
  /** The spawn command's id: the vendor's client message id for the first prompt, and the worktree's default name. */
  commandId: string;
}

/** A worker the vendor's launcher started: its session, its end, and how to stop it. */
export interface Worker {
  session: string;
  /** Resolves once the worker's process is gone, however it ended. */
  readonly ended: Promise<void>;
  stop(): Promise<void>;
}

/** A vendor's way to start a worker in a checked directory with its first prompt. */
export type Launcher = (req: { cwd: string; prompt: string; model?: string; commandId: string }) => Promise<Worker>;

/** A spawn's answer: the new session (and the worktree made for it), or why not. */
type SpawnOutcome =
  | { ok: true; session: string; cwd: string; worktree?: string; ended: Promise<void> }
  | ({ ok: false } & Rejection);

export interface SpawnerOptions {
  /** `--spawn-root`s, as given (none: spawn is off). */
  roots: readonly string[];
  /** `--max-spawned` (default 4). */
  max?: number;
  launch: Launcher;
}

const DEFAULT_MAX_SPAWNED = 4;

export interface Spawner {
  spawn(req: SpawnRequest): Promise<SpawnOutcome>;
  /** The sessions running now. */
  running(): string[];
  /** Stops one worker and waits for it to be gone (nothing when it is not running). */
  stop(session: string): Promise<void>;
  /** Stops every worker still running and waits for each to be gone. */
  stopAll(): Promise<void>;
}

const no = (r: Rejection): SpawnOutcome => ({ ok: false, ...r });

export function spawner(o: SpawnerOptions): Spawner {
  const roots = realRoots(o.roots).roots;
  const slots = new SpawnSlots(o.max ?? DEFAULT_MAX_SPAWNED);
  const workers = new Map<string, Worker>();
  let stopping = false;

  async function spawn(req: SpawnRequest): Promise<SpawnOutcome> {
    if (stopping)
      return no({ reason: 'busy', rule: 'spawn-off', detail: 'the adapter is stopping: spawn again once it runs' });
    const place = checkSpawnCwd(req.cwd, roots);
    if ('reason' in place) return no(place);
    const slot = slots.take();
    if ('reason' in slot) return no(slot);
    let cwd = place.cwd;
    let worktree: string | undefined;
    if (req.worktree !== undefined && req.worktree !== false) {
      const plan = await planWorktree(place.cwd, place.root, req.worktree, req.commandId.toLowerCase());
      if ('reason' in plan) {
        slot.release();
        return no(plan);
      }
      const made = await makeWorktree(plan);
      if ('reason' in made) {
        slot.release();
        return no(made);
      }
      cwd = made.cwd;
      worktree = plan.path;
    }
    let worker: Worker;
    try {
      worker = await o.launch({
        cwd,
        prompt: req.prompt,
        commandId: req.commandId,
        ...(req.model === undefined ? {} : { model: req.model }),
      });
    } catch (err) {
      slot.release();
      // A worktree made for a worker that never started is kept: git owns it, and the answer names it.
      const kept = worktree === undefined ? '' : ` (the worktree ${worktree} was made and is kept)`;
      return no({
        reason: 'unsupported',
        rule: 'spawn-failed',
        detail: `the worker could not start: ${(err as Error).message}${kept}`,
      });
    }
    slot.hold(worker.session);
    workers.set(worker.session, worker);
    void worker.ended.then(() => {
      workers.delete(worker.session);
      slots.ended(worker.session);
    });
    const ended = worker.ended;
    return { ok: true, session: worker.session, cwd, ended, ...(worktree === undefined ? {} : { worktree }) };
  }

  return {
    spawn,
    running: () => [...workers.keys()],
    async stop(session) {
      const w = workers.get(session);
      if (w !== undefined) await w.stop().then(() => w.ended);
    },
    async stopAll() {
      stopping = true;
      await Promise.all([...workers.values()].map((w) => w.stop().then(() => w.ended)));
    },
  };
}
