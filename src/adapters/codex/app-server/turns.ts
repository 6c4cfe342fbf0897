// The Codex app-server lane's turn bookkeeping (D33): what ran under the server as each turn
// started, the shell commands a turn started and never finished, and a turn's end, which names
// the tool processes an interrupt left running (or ended, on `kill_tools`). Such an end is ready
// only once those processes are looked at, so the lane's facts go out through an ordered queue.
import type { Subject } from 'rxjs';
import type { LaneFact } from '../../../streams/lane.js';
import { endTools, findTools, outlasting, pidsUnder, shellToolsSince } from '../../tool-processes.js';

type TurnEnded = Extract<LaneFact, { kind: 'turn.ended' }>;

/** The lane's facts in the order they happened, one that is ready later holding back those after it. */
export interface OrderedFacts {
  fact(f: LaneFact): void;
  /** A fact that is ready later (a turn end after its tools were ended); the facts after it wait for it. */
  factLater(f: Promise<LaneFact>): void;
}

export function orderedFacts(facts$: Subject<LaneFact>): OrderedFacts {
  /** A turn end waiting for its tool processes to be ended: later facts go out after it, in order. */
  let behind: Promise<void> | undefined;
  return {
    fact(f) {
      if (behind === undefined) facts$.next(f);
      else behind = behind.then(() => facts$.next(f));
    },
    factLater(f) {
      const mine = (behind ?? Promise.resolve()).then(() => f).then((x) => facts$.next(x));
      behind = mine;
      void mine.finally(() => {
        if (behind === mine) behind = undefined;
      });
    },
  };
}

export interface TurnBook {
  /** Shell commands started and not completed, by thread and item id: what an interrupt may leave running. */
  readonly commands: Map<string, string>;
  /** Threads whose interrupt asked for their tool processes to be ended too (D33 `kill_tools`). */
  readonly killing: Set<string>;
  /** A turn starts: what runs under the server now is not the turn's (read only where a stop may ask). */
  started(threadId: string): void;
  /** A turn's end, with the shell commands it never finished when it was interrupted. */
  ended(threadId: string, base: TurnEnded): void;
  clear(): void;
}

/** `serverPid`: the app-server's pid, whose descendants are the turns' tool processes. */
export function turnBook(facts: OrderedFacts, serverPid: () => number | undefined): TurnBook {
  const commands = new Map<string, string>();
  const killing = new Set<string>();
  /** What ran under the server as each thread's turn started: what is new at an interrupted end, the turn started. */
  const baseline = new Map<string, Set<number>>();

  /**
   * D33, observed on 0.171.0: `turn/interrupt` ends the turn (`interrupted`) but a running shell
   * command's item never completes and its process goes on under the app-server. The turn's end
   * names such processes; on `kill_tools` the lane ends them first and names them `killed`.
   */
  function interruptedEnd(base: TurnEnded, open: string[], before: Set<number> | undefined, kill: boolean): void {
    const pid = serverPid();
    const left = findTools(pid, open);
    // Observed with the TUI as client: a command's item is announced only when it returns, so
    // the shell tools the turn started are looked for too.
    if (before !== undefined)
      for (const t of shellToolsSince(pid, before)) if (!left.some((l) => l.pid === t.pid)) left.push(t);
    if (left.length === 0) {
      facts.fact(base);
      return;
    }
    // What the vendor is still ending is neither left running nor ours to end: only what outlasts it is.
    facts.factLater(
      outlasting(left)
        .then(async (still) => {
          if (still.length === 0) return base;
          if (!kill) return { ...base, leftRunning: still };
          const r = await endTools(still);
          return {
            ...base,
            ...(r.killed.length ? { killed: r.killed } : {}),
            ...(r.leftRunning.length ? { leftRunning: r.leftRunning } : {}),
          };
        })
        .catch(() => ({ ...base, leftRunning: left })),
    );
  }

  return {
    commands,
    killing,
    started(threadId) {
      const now = pidsUnder(serverPid());
      if (now === undefined) baseline.delete(threadId);
      else baseline.set(threadId, now);
    },
    ended(threadId, base) {
      const open: string[] = [];
      for (const [k, cmd] of commands) {
        if (!k.startsWith(`${threadId}/`)) continue;
        open.push(cmd);
        commands.delete(k);
      }
      const kill = killing.delete(threadId);
      const before = baseline.get(threadId);
      baseline.delete(threadId);
      if (base.interrupted) interruptedEnd(base, open, before, kill);
      else facts.fact(base);
    },
    clear() {
      commands.clear();
      killing.clear();
      baseline.clear();
    },
  };
}
