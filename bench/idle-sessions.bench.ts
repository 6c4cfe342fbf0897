// Memory per idle session: 1,000,000 sessions (each spawned by a real hook through the actor
// host, announced with session.started so it holds a sequence position) held in one process,
// against 1,000,000 plain objects holding the same context. Measured in a child process run with
// --expose-gc so both figures come from a clean heap; the child is this same file with a flag.
// The actor child also reports its whole heap, which must stay under 1 GiB with every session held.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { figure, QUICK, type BenchFigure } from './types.js';

// A quick run holds a tenth of them and judges the heap against a tenth of the budget.
const SESSIONS = QUICK ? 100_000 : 1_000_000;
const BUDGET_BYTES = 1024 ** 3;
const CHILD_FLAG = '--idle-sessions-child';

async function measureInChild(which: 'actors' | 'plain'): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const settle = () => {
    for (let i = 0; i < 4; i += 1) gc();
    return process.memoryUsage().heapUsed;
  };
  const keep: unknown[] = [];
  let before: number;
  if (which === 'actors') {
    const { ActorHost } = await import('../src/streams/actor-host.js');
    const host = new ActorHost({
      instruct: true,
      host: 'bench',
      surface: {
        token: 'bench-agent',
        steeringType: 'x.bench-agent.control.instruct',
        port: 0,
        attentionTimeoutMs: 55_000,
        // Each session announced itself (session.started), so it holds a sequence position.
        classify: (i) => ({
          session: String(i.session_id),
          event: 'SessionStart',
          observations: [{ type: 'session.started', data: {} }],
          class: { kind: 'moment', eligible: true },
        }),
        contextReply: () => ({ body: {} }),
        neutralReply: () => ({ body: {} }),
        decisionReply: () => ({ body: {} }),
      },
    });
    // Warm the machine and module state so only per-session cost is counted.
    host.step({
      kind: 'hook',
      session: 'warm',
      hookId: 'w',
      at: 0,
      hook: host.surface.classify({ session_id: 'warm' }),
    });
    before = settle();
    for (let i = 0; i < SESSIONS; i += 1) {
      const session = `session-${i}`;
      host.step({
        kind: 'hook',
        session,
        hookId: `h${i}`,
        at: i,
        hook: host.surface.classify({ session_id: session }),
      });
    }
    keep.push(host);
    if (host.sessionKeys().length !== SESSIONS + 1) throw new Error('not every session was spawned');
  } else {
    before = settle();
    const map = new Map<string, unknown>();
    for (let i = 0; i < SESSIONS; i += 1) {
      const session = `session-${i}`;
      map.set(session, { session, vendor: 'bench-agent', queue: [], inFlight: [], holds: [], decisions: {} });
    }
    keep.push(map);
  }
  const after = settle();
  process.stdout.write(
    `${JSON.stringify({ bytesPerSession: (after - before) / SESSIONS, heapBytes: after, kept: keep.length })}\n`,
  );
}

function runChild(which: 'actors' | 'plain'): { bytesPerSession: number; heapBytes: number } {
  const file = fileURLToPath(import.meta.url);
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', file, CHILD_FLAG, which], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const line = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as { bytesPerSession: number; heapBytes: number };
}

const flagAt = process.argv.indexOf(CHILD_FLAG);
if (flagAt !== -1) await measureInChild(process.argv[flagAt + 1] === 'plain' ? 'plain' : 'actors');

export default async (): Promise<BenchFigure[]> => {
  const actors = runChild('actors');
  const plain = runChild('plain');
  const n = SESSIONS.toLocaleString('en');
  return [
    figure({
      name: 'idle-session-memory',
      what: `heap bytes per idle session with ${n} sessions held by the actor host (state, context, sequence position) in one process`,
      unit: 'B/session',
      value: actors.bytesPerSession,
      baseline: plain.bytesPerSession,
      baselineWhat: `${n} plain objects holding the same context, same run`,
    }),
    figure({
      name: 'idle-sessions-heap',
      what: `whole heap of the process holding those ${n} idle sessions (after GC)`,
      unit: 'MiB',
      value: actors.heapBytes / 1024 ** 2,
      baseline: (BUDGET_BYTES * (SESSIONS / 1_000_000)) / 1024 ** 2,
      baselineWhat: `the 1 GiB budget for a million idle sessions${QUICK ? ', a tenth of it for a tenth of them' : ''} (a limit, not a measurement)`,
      goal: '<= 1',
    }),
  ];
};
