// The adapter's app-server lane as `aep-steer run codex` feeds it: each run starts an app-server
// of its own, with the person's environment, on a socket in one private directory
// (`$AEP_STATE_DIR/codex/`), and asks the adapter to open the lane; this lane then joins every
// server listening there (each through the single-server lane in lane.ts, which never starts or
// removes one here) and speaks for all of them as the one `app-server` lane. A server whose run
// ended goes quietly; one that died on its own is said, as the single-server lane says it.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Subject, type Subscription } from 'rxjs';
import type { LaneFact, LaneOutcome, LaneRequest, SteeringLane } from '../../../streams/lane.js';
import { APP_SERVER_LANE, codexAppServerLane } from './lane.js';
import { ensurePrivateDir } from './serve.js';

export interface CodexServersOptions {
  /** Where the runs' sockets are (directory 700). */
  dir: string;
  /** The `codex` binary (the joined lanes start nothing; named for their messages). */
  bin: string;
}

interface Joined {
  lane: SteeringLane;
  /** The threads this server's lane reaches, to detach them alone when it goes. */
  sessions: Set<string>;
  sub?: Subscription;
}

const unreached = (session: string): LaneOutcome => ({
  ok: false,
  reason: 'unreachable',
  detail: `no app-server of an \`aep-steer run codex\` reaches session ${session}`,
});

export function codexServersLane(o: CodexServersOptions): SteeringLane {
  const facts$ = new Subject<LaneFact>();
  const joined = new Map<string, Joined>();
  const joining = new Map<string, Promise<void>>();
  let closed = false;

  const holder = (session: string): Joined | undefined => [...joined.values()].find((j) => j.lane.reaches(session));

  function onFact(path: string, j: Joined, f: LaneFact): void {
    if (f.kind === 'attached') j.sessions.add(f.session);
    if (f.kind === 'detached') j.sessions.delete(f.session);
    if (f.kind !== 'lost') {
      facts$.next(f);
      return;
    }
    if (joined.get(path) === j) joined.delete(path);
    j.sub?.unsubscribe();
    void j.lane.close();
    if (closed) return;
    // A run removes its socket before it stops its server: a socket still there means the server
    // died under its TUI, which the person at the adapter is told (once, by the core).
    const ended = !existsSync(path);
    if (joined.size === 0) {
      facts$.next({ ...f, ...(ended ? { said: true } : {}) });
      return;
    }
    for (const session of j.sessions) facts$.next({ kind: 'detached', session, at: f.at, detail: f.detail });
  }

  async function join1(path: string): Promise<void> {
    const lane = codexAppServerLane({ bin: o.bin, socketPath: path, attachOnly: true });
    const j: Joined = { lane, sessions: new Set() };
    j.sub = lane.facts$.subscribe((f) => onFact(path, j, f));
    joined.set(path, j);
    try {
      await lane.open?.();
    } catch {
      // Nothing answers there (a run that ended without removing it): the run that takes the name removes it.
      if (joined.get(path) === j) joined.delete(path);
      j.sub.unsubscribe();
      await lane.close();
    }
  }

  function joinAt(path: string): Promise<void> {
    const pending = joining.get(path);
    if (pending !== undefined) return pending;
    const p = join1(path).finally(() => joining.delete(path));
    joining.set(path, p);
    return p;
  }

  const route = async <T>(session: string, call: (l: SteeringLane) => Promise<T>, none: T): Promise<T> => {
    const j = holder(session);
    return j === undefined ? none : call(j.lane);
  };

  return {
    ...APP_SERVER_LANE,
    facts$: facts$.asObservable(),
    async open() {
      ensurePrivateDir(o.dir);
      const sockets = readdirSync(o.dir)
        .filter((n) => n.endsWith('.sock'))
        .map((n) => join(o.dir, n))
        .filter((p) => !joined.has(p));
      await Promise.all(sockets.map(joinAt));
      return { dir: o.dir, servers: [...joined.keys()].map((p) => `unix://${p}`) };
    },
    reaches: (session) => holder(session) !== undefined,
    steer: (req: LaneRequest) => route(req.session, (l) => l.steer(req), unreached(req.session)),
    startTurn: (req) =>
      route(req.session, (l) => l.startTurn?.(req) ?? Promise.resolve(unreached(req.session)), unreached(req.session)),
    // Whatever the interrupt takes besides the session (D33 `killTools`) is passed on as it is.
    interrupt: (...a: Parameters<NonNullable<SteeringLane['interrupt']>>) =>
      route(a[0], (l) => l.interrupt!(...a), {
        ok: false as const,
        detail: 'no turn is running on an app-server of `aep-steer run codex`',
      }),
    answer: (session, approvalId, approved) =>
      route(session, (l) => l.answer!(session, approvalId, approved), {
        ok: false as const,
        detail: 'the app-server no longer asks this',
      }),
    async close() {
      closed = true;
      const all = [...joined.values()];
      joined.clear();
      for (const j of all) {
        j.sub?.unsubscribe();
        await j.lane.close();
      }
      facts$.complete();
    },
  };
}
