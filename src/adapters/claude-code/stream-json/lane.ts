// The Claude Code stream-json lane (D30): headless `claude -p` sessions that `aep-steer run claude`
// runs for an orchestrator. Each run joins this lane over a private Unix socket in the adapter's
// state directory and relays the CLI's stream-json both ways: what the CLI prints comes here, what
// the lane writes goes to the CLI's stdin. A session is Claude's `session_id` (the hooks carry the
// same id). Facts and answers as in streams/lane.ts; what each line means is in stream.ts.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { Subject } from 'rxjs';
import type { LaneFact, LaneOutcome, LaneRequest, NativeLane } from '../../../streams/lane.js';
import { controlLine, lineReader, readLine, userLine, uuidFor, type Line } from './stream.js';

export interface StreamJsonLaneOptions {
  /** The private socket runs join (dir 700, socket 600). */
  socketPath: string;
  /** How long a control request waits for the CLI's answer. */
  answerMs?: number;
}

/** One run's session as the lane tracks it. */
interface Run {
  socket: Socket;
  session?: string;
  turn?: string;
  turns: number;
  /** Messages written and not yet read, by uuid: the command id and whether it waits for a later turn. */
  unread: Map<string, { commandId: string; later: boolean }>;
  answers: Map<string, (a: { ok: boolean; response: Line }) => void>;
  stopping?: boolean;
}

export function streamJsonLane(opts: StreamJsonLaneOptions): NativeLane {
  const facts$ = new Subject<LaneFact>();
  const runs = new Set<Run>();
  let server: Server | undefined;
  let listening: Promise<void> | undefined;
  let nextRequest = 0;
  const fact = (f: LaneFact): void => facts$.next(f);
  const runOf = (session: string): Run | undefined => [...runs].find((r) => r.session === session);
  /** Writes a line to the run; false when the run is gone (a full buffer still queues it). */
  const write = (run: Run, l: Line): boolean => {
    if (run.socket.destroyed || !run.socket.writable) return false;
    run.socket.write(`${JSON.stringify(l)}\n`);
    return true;
  };

  function onLine(run: Run, l: Line): void {
    const e = readLine(l);
    const at = Date.now();
    switch (e.kind) {
      case 'init':
        if (run.session === undefined) {
          run.session = e.session;
          fact({ kind: 'attached', session: e.session, at });
        }
        if (run.turn === undefined) {
          run.turn = `${e.session}:${++run.turns}`;
          fact({ kind: 'turn.started', session: e.session, at, turnId: run.turn });
        }
        return;
      case 'result': {
        if (run.session === undefined || run.turn === undefined) return;
        const turnId = run.turn;
        run.turn = undefined;
        const interrupted = e.interrupted || run.stopping === true;
        run.stopping = false;
        fact({ kind: 'turn.ended', session: run.session, at, turnId, status: e.status, interrupted });
        return;
      }
      case 'read': {
        const m = run.unread.get(e.uuid);
        if (m === undefined || run.session === undefined) return;
        run.unread.delete(e.uuid);
        fact({ kind: 'delivered', session: run.session, at, commandId: m.commandId, ref: e.uuid });
        return;
      }
      case 'cancelled':
        run.unread.delete(e.uuid);
        return;
      case 'answer':
        run.answers.get(e.requestId)?.(e);
        run.answers.delete(e.requestId);
        return;
    }
  }

  function join(socket: Socket): void {
    const run: Run = { socket, turns: 0, unread: new Map(), answers: new Map() };
    runs.add(run);
    socket.on(
      'data',
      lineReader((l) => onLine(run, l)),
    );
    socket.on('error', () => undefined);
    socket.on('close', () => {
      runs.delete(run);
      for (const a of run.answers.values()) a({ ok: false, response: { error: 'the run ended' } });
      if (run.session !== undefined)
        fact({ kind: 'detached', session: run.session, at: Date.now(), detail: 'the claude -p run ended' });
    });
  }

  /** A control request to the run's CLI; its answer, or why there is none. */
  function control(run: Run, request: Line): Promise<{ ok: boolean; response: Line }> {
    const id = `aep-${++nextRequest}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        run.answers.delete(id);
        resolve({ ok: false, response: { error: 'claude did not answer in time' } });
      }, opts.answerMs ?? 10_000);
      run.answers.set(id, (a) => {
        clearTimeout(timer);
        resolve(a);
      });
      if (!write(run, controlLine(id, request))) {
        clearTimeout(timer);
        run.answers.delete(id);
        resolve({ ok: false, response: { error: 'the run is gone' } });
      }
    });
  }

  function send(req: LaneRequest, later: boolean): LaneOutcome {
    const run = runOf(req.session);
    if (run === undefined) return { ok: false, reason: 'unreachable', detail: 'no claude -p run of this session' };
    if (!later && run.turn === undefined) return { ok: false, reason: 'idle', detail: 'no turn is running' };
    const uuid = uuidFor(req.commandId);
    run.unread.set(uuid, { commandId: req.commandId, later });
    if (!write(run, userLine(uuid, req.text, later ? 'later' : undefined))) {
      run.unread.delete(uuid);
      return { ok: false, reason: 'unreachable', detail: 'the run is gone' };
    }
    return { ok: true, ref: uuid };
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
      const s = createServer(join);
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
    how: 'run it headless with `aep-steer run claude -p`',
    facts$: facts$.asObservable(),
    async open() {
      await listen();
      return { address: opts.socketPath };
    },
    reaches: (session) => runOf(session) !== undefined,
    steer: async (req) => send(req, false),
    queue: async (req) => send(req, true),
    withdraw: (req) => withdraw(req.session, req.commandId),
    async interrupt(session) {
      const run = runOf(session);
      if (run === undefined || run.turn === undefined) return { ok: false, detail: 'no turn is running' };
      // Observed: what still waits when the turn is interrupted runs next; it is taken back first.
      for (const m of [...run.unread.values()]) await withdraw(session, m.commandId);
      run.stopping = true;
      const a = await control(run, { subtype: 'interrupt' });
      if (!a.ok) run.stopping = false;
      return a.ok ? { ok: true } : { ok: false, detail: String(a.response.error ?? 'refused') };
    },
    async close() {
      for (const r of runs) r.socket.destroy();
      await new Promise((r) => (server === undefined ? r(undefined) : server.close(() => r(undefined))));
      if (server !== undefined) rmSync(opts.socketPath, { force: true });
      server = undefined;
      facts$.complete();
    },
  };
}
