// The `claude -p` runs joined on the stream-json lane's socket, as the lane tracks each: its
// session and running turn, the messages written and not yet read, the control requests awaiting
// the CLI's answer. What a line the CLI printed means is in stream.ts; here it becomes the lane's facts.
import type { Socket } from 'node:net';
import type { LaneFact } from '../../../streams/lane.js';
import { controlLine, lineReader, readLine, type Line } from './stream.js';

/** One run's session as the lane tracks it. */
export interface Run {
  socket: Socket;
  session?: string;
  turn?: string;
  turns: number;
  /**
   * Messages written and not yet read, by uuid: the command id and whether it waits for a later
   * turn; `also`: the other commands a message joining several carries (a queue handed over whole).
   */
  unread: Map<string, { commandId: string; later: boolean; startsTurn?: string; startedIn?: string; also?: string[] }>;
  answers: Map<string, (a: { ok: boolean; response: Line }) => void>;
  stopping?: boolean;
}

/** Writes a line to the run; false when the run is gone (a full buffer still queues it). */
export const writeLine = (run: Run, l: Line): boolean => {
  if (run.socket.destroyed || !run.socket.writable) return false;
  run.socket.write(`${JSON.stringify(l)}\n`);
  return true;
};

/** A run that joined on `socket`: tracked in `runs` until its socket closes. */
export function joinRun(socket: Socket, runs: Set<Run>, fact: (f: LaneFact) => void): void {
  const run: Run = { socket, turns: 0, unread: new Map(), answers: new Map() };
  runs.add(run);
  socket.on(
    'data',
    lineReader((l) => onLine(run, l, fact)),
  );
  socket.on('error', () => undefined);
  socket.on('close', () => {
    runs.delete(run);
    for (const a of run.answers.values()) a({ ok: false, response: { error: 'the run ended' } });
    if (run.session !== undefined)
      fact({ kind: 'detached', session: run.session, at: Date.now(), detail: 'the claude -p run ended' });
  });
}

/** What one line the run printed changes, and the facts it makes. */
function onLine(run: Run, l: Line, fact: (f: LaneFact) => void): void {
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
      // D43: a message that began a turn is received as that turn's prompt: its ref is the turn. One
      // sent to start a turn while the last one was still ending began one only if it is read in another.
      const receipt = {
        ...(m.startsTurn !== undefined
          ? { ref: m.startsTurn, started: true }
          : m.startedIn !== undefined
            ? run.turn === m.startedIn
              ? { ref: e.uuid, started: false }
              : { ref: run.turn ?? `${run.session}:${run.turns + 1}`, started: true }
            : { ref: e.uuid }),
      };
      for (const commandId of [m.commandId, ...(m.also ?? [])])
        fact({ kind: 'delivered', session: run.session, at, commandId, ...receipt });
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

/** A control request `id` to the run's CLI; its answer, or why there is none within `answerMs`. */
export function controlRequest(
  run: Run,
  id: string,
  request: Line,
  answerMs: number,
): Promise<{ ok: boolean; response: Line }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      run.answers.delete(id);
      resolve({ ok: false, response: { error: 'claude did not answer in time' } });
    }, answerMs);
    run.answers.set(id, (a) => {
      clearTimeout(timer);
      resolve(a);
    });
    if (!writeLine(run, controlLine(id, request))) {
      clearTimeout(timer);
      run.answers.delete(id);
      resolve({ ok: false, response: { error: 'the run is gone' } });
    }
  });
}
