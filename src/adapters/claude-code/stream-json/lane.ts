// The Claude Code stream-json lane (D30): headless `claude -p` sessions that `aep-steer run claude`
// runs for an orchestrator. Each run joins this lane over a private Unix socket in the adapter's
// state directory and relays the CLI's stream-json both ways: what the CLI prints comes here, what
// the lane writes goes to the CLI's stdin. A session is Claude's `session_id` (the hooks carry the
// same id). Facts and answers as in streams/lane.ts; what each line means is in stream.ts, and
// how each run is tracked in joined-runs.ts.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname } from 'node:path';
import { Subject } from 'rxjs';
import { closeLaneServer } from '../../run-socket.js';
import type { LaneFact, LaneOutcome, LaneRequest, SteeringLane } from '../../../streams/lane.js';
import { controlRequest, joinRun, writeLine, type Run } from './joined-runs.js';
import { userLine, uuidFor, type Line } from './stream.js';

export interface StreamJsonLaneOptions {
  /** The private socket runs join (dir 700, socket 600). */
  socketPath: string;
  /** How long a control request waits for the CLI's answer. */
  answerMs?: number;
}

/** A steer (`later` false) or a queue written to the run's CLI as a user message. */
function sendTo(run: Run | undefined, req: LaneRequest, later: boolean): LaneOutcome {
  if (run === undefined) return { ok: false, reason: 'unreachable', detail: 'no claude -p run of this session' };
  if (!later && run.turn === undefined) return { ok: false, reason: 'idle', detail: 'no turn is running' };
  const uuid = uuidFor(req.commandId);
  run.unread.set(uuid, { commandId: req.commandId, later });
  if (!writeLine(run, userLine(uuid, req.text, later ? 'later' : undefined))) {
    run.unread.delete(uuid);
    return { ok: false, reason: 'unreachable', detail: 'the run is gone' };
  }
  return { ok: true, ref: uuid };
}

/**
 * D43: a user message to a run between turns begins its next turn (the turn `<session>:<n+1>`,
 * as the run numbers them). With a turn still shown running (the person's, or one whose end the
 * CLI has not printed yet) a queue waits for the next turn; a plain message is folded into the
 * turn if it still runs, or begins the next: its receipt says which.
 */
function startIn(run: Run | undefined, req: LaneRequest & { otherwise: 'steer' | 'queue' }): LaneOutcome {
  if (run === undefined) return { ok: false, reason: 'unreachable', detail: 'no claude -p run of this session' };
  if (run.turn !== undefined && req.otherwise === 'queue') {
    const o = sendTo(run, req, true);
    return o.ok ? { ...o, became: 'queue' } : o;
  }
  const uuid = uuidFor(req.commandId);
  const turn = `${req.session}:${run.turns + 1}`;
  run.unread.set(
    uuid,
    run.turn === undefined
      ? { commandId: req.commandId, later: false, startsTurn: turn }
      : { commandId: req.commandId, later: false, startedIn: run.turn },
  );
  if (!writeLine(run, userLine(uuid, req.text, undefined))) {
    run.unread.delete(uuid);
    return { ok: false, reason: 'unreachable', detail: 'the run is gone' };
  }
  return run.turn === undefined ? { ok: true, ref: turn } : { ok: true };
}

/** Starts asked for one session in one step of the core, gathered until the step's calls are in. */
type Batch = { req: LaneRequest & { otherwise: 'steer' | 'queue' }; resolve: (o: LaneOutcome) => void }[];

/**
 * D44: starts asked together (a queue handed over whole at a turn's end) go to an idle run as one
 * message, their texts joined as a moment's are (D8), so the turn they begin reads all of them in
 * its first request: the CLI takes the first message written at once and would run the rest,
 * joined, as a turn after it. Each command gets the one message's receipt.
 */
function startAll(run: Run | undefined, batch: Batch): void {
  if (run === undefined || run.turn !== undefined || batch.length === 1) {
    for (const b of batch) b.resolve(startIn(run, b.req));
    return;
  }
  const [first, ...rest] = batch.map((b) => b.req);
  const uuid = uuidFor(first!.commandId);
  const turn = `${first!.session}:${run.turns + 1}`;
  run.unread.set(uuid, {
    commandId: first!.commandId,
    later: false,
    startsTurn: turn,
    also: rest.map((r) => r.commandId),
  });
  const text = batch.map((b) => b.req.text).join('\n\n');
  const o: LaneOutcome = writeLine(run, userLine(uuid, text, undefined))
    ? { ok: true, ref: turn }
    : { ok: false, reason: 'unreachable', detail: 'the run is gone' };
  if (!o.ok) run.unread.delete(uuid);
  for (const b of batch) b.resolve(o);
}

/**
 * A plain steer the turn ended without reading would begin the run's next turn, a turn nobody
 * asked for: it is taken back (`cancel_async_message`) and dropped `turn-ended` with the turn. One
 * the CLI would not give back is already being run: kept, its receipt (the read) delivers it.
 */
async function settleUnread(
  f: Extract<LaneFact, { kind: 'turn.ended' }>,
  run: Run | undefined,
  withdraw: (session: string, commandId: string) => Promise<{ removed: boolean } | { error: string }>,
): Promise<LaneFact> {
  const plain = [...(run?.unread.values() ?? [])].filter(
    (m) => !m.later && m.startsTurn === undefined && m.startedIn === undefined,
  );
  const kept: string[] = [];
  for (const m of plain) {
    const w = await withdraw(f.session, m.commandId);
    if (!('removed' in w) || !w.removed) kept.push(m.commandId);
  }
  return kept.length === 0 ? f : { ...f, kept };
}

export function streamJsonLane(opts: StreamJsonLaneOptions): SteeringLane {
  const facts$ = new Subject<LaneFact>();
  const runs = new Set<Run>();
  let server: Server | undefined;
  let listening: Promise<void> | undefined;
  let nextRequest = 0;
  const batches = new Map<string, Batch>();
  // Facts go out in the order the runs printed them, a turn's end once its unread steers are settled.
  let said = Promise.resolve();
  const fact = (f: LaneFact): void => {
    said = said
      .then(() => (f.kind === 'turn.ended' ? settleUnread(f, runOf(f.session), withdraw) : f))
      .then((g) => facts$.next(g));
  };
  const runOf = (session: string): Run | undefined => [...runs].find((r) => r.session === session);

  /** A control request to the run's CLI; its answer, or why there is none. */
  function control(run: Run, request: Line): Promise<{ ok: boolean; response: Line }> {
    const id = `aep-${++nextRequest}`;
    return controlRequest(run, id, request, opts.answerMs ?? 10_000);
  }

  async function withdraw(session: string, commandId: string): Promise<{ removed: boolean } | { error: string }> {
    const run = runOf(session);
    if (run === undefined) return { error: 'no claude -p run of this session' };
    const uuid = uuidFor(commandId);
    const a = await control(run, { subtype: 'cancel_async_message', message_uuid: uuid });
    if (!a.ok) return { error: String(a.response.error ?? 'refused') };
    const removed = a.response.cancelled === true;
    if (removed) run.unread.delete(uuid);
    return { removed };
  }

  function listen(): Promise<void> {
    listening ??= new Promise<void>((resolve, reject) => {
      mkdirSync(dirname(opts.socketPath), { recursive: true, mode: 0o700 });
      chmodSync(dirname(opts.socketPath), 0o700);
      // A socket left by an adapter that died is stale: this adapter is the one listening now.
      rmSync(opts.socketPath, { force: true });
      const s = createServer((socket) => joinRun(socket, runs, fact));
      s.once('error', (err) => {
        listening = undefined;
        reject(err);
      });
      s.listen(opts.socketPath, () => {
        chmodSync(opts.socketPath, 0o600);
        server = s;
        resolve();
      });
    });
    return listening;
  }

  return {
    name: 'stream-json',
    deliveries: ['steer', 'queue'],
    // D44: the CLI cannot edit or reorder a `later` message, so what is queued during a turn stays
    // the adapter's and goes over at the turn's end, all of it, as the next turn's start.
    handsQueue: { take: 'all', as: 'start' },
    how: 'run it headless with `aep-steer run claude -p`',
    facts$: facts$.asObservable(),
    async open() {
      await listen();
      return { address: opts.socketPath };
    },
    reaches: (session) => runOf(session) !== undefined,
    steer: async (req) => sendTo(runOf(req.session), req, false),
    queue: async (req) => sendTo(runOf(req.session), req, true),
    startTurn: (req) =>
      new Promise<LaneOutcome>((resolve) => {
        const batch = batches.get(req.session);
        if (batch !== undefined) return void batch.push({ req, resolve });
        batches.set(req.session, [{ req, resolve }]);
        // The step's other calls are made in this turn of the event loop.
        setImmediate(() => {
          const all = batches.get(req.session) ?? [];
          batches.delete(req.session);
          startAll(runOf(req.session), all);
        });
      }),
    withdraw: (req) => withdraw(req.session, req.commandId),
    async interrupt(session) {
      const run = runOf(session);
      if (run === undefined || run.turn === undefined) return { ok: false, detail: 'no turn is running' };
      // Observed: what still waits when the turn is interrupted runs next. A steer is taken back
      // first; a `later` one is the queue, which a cancel keeps (D44): it runs next, as it would.
      for (const m of [...run.unread.values()]) if (!m.later) await withdraw(session, m.commandId);
      run.stopping = true;
      const a = await control(run, { subtype: 'interrupt' });
      if (!a.ok) run.stopping = false;
      return a.ok ? { ok: true } : { ok: false, detail: String(a.response.error ?? 'refused') };
    },
    async close() {
      await closeLaneServer(server, opts.socketPath, runs);
      server = undefined;
      facts$.complete();
    },
  };
}
