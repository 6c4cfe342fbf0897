// The Copilot server lane (D30, D50): sessions that `aep-steer run copilot` hosts on Copilot CLI's
// headless server join it over a private Unix socket in the adapter's state directory (wire.ts).
// Steer is `session.send {mode: "immediate"}` (the same turn's next model request), queue is
// `mode: "enqueue"` (the next turn), a start is a send while idle, withdraw is
// `session.queue.withdrawMessage`, cancel is `session.abort`, and permissions are answered with
// `session.permissions.handlePendingPermissionRequest` (copilot-opencode-observed §1). The receipt
// of each is the `user.message` event carrying the id the send answered, and its `delivery`.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { Subject } from 'rxjs';
import { closeLaneServer } from '../../run-socket.js';
import type { LaneFact, LaneOutcome, LaneRequest, SteeringLane } from '../../../streams/lane.js';
import { callRun, joinRun, receipt, type HostedRun } from './hosted-runs.js';

export interface CopilotLaneOptions {
  socketPath: string;
  answerMs?: number;
}

// D44: `queue` stays with the adapter (the lane does not honour it), where every queue verb works;
// the first waiting one goes over as a start each time a turn ends (its hand-over row).
export const COPILOT_SERVER_LANE = {
  name: 'server',
  deliveries: ['steer'],
  handsQueue: { take: 'one', as: 'start' },
  how: 'host it with `aep-steer run copilot`',
} as const;

/** Listens on a private socket (dir 700, socket 600); one left by an adapter that died is replaced. */
function listenOn(path: string, onSocket: (s: Socket) => void): Promise<Server> {
  return new Promise((resolve, reject) => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    chmodSync(dirname(path), 0o700);
    rmSync(path, { force: true });
    const s = createServer(onSocket);
    s.once('error', reject);
    s.listen(path, () => {
      chmodSync(path, 0o600);
      resolve(s);
    });
  });
}

export function copilotServerLane(opts: CopilotLaneOptions): SteeringLane {
  const facts$ = new Subject<LaneFact>();
  const runs = new Set<HostedRun>();
  let server: Server | undefined;
  let listening: Promise<void> | undefined;
  const fact = (f: LaneFact): void => facts$.next(f);
  const call = (run: HostedRun, method: string, params: Record<string, unknown>): Promise<unknown> =>
    callRun(run, method, params, opts.answerMs ?? 15_000);
  const runOf = (session: string): HostedRun | undefined => [...runs].find((r) => r.session === session);

  /** One `session.send`; the id it answered is the receipt's key. */
  async function send(req: LaneRequest, mode: 'immediate' | 'enqueue', start: boolean): Promise<LaneOutcome> {
    const run = runOf(req.session);
    if (run === undefined) return { ok: false, reason: 'unreachable', detail: 'no Copilot session hosted by a run' };
    let r: { messageId?: unknown };
    try {
      r = (await call(run, 'session.send', { prompt: req.text, mode })) as typeof r;
    } catch (e) {
      return { ok: false, reason: 'unreachable', detail: (e as Error).message };
    }
    if (typeof r.messageId !== 'string') return { ok: false, reason: 'refused', detail: 'the send answered no id' };
    run.sent.set(r.messageId, { commandId: req.commandId, text: req.text, start });
    const early = run.early.get(r.messageId);
    if (early !== undefined) {
      run.early.delete(r.messageId);
      receipt(run, r.messageId, early, fact);
    }
    return { ok: true, ref: r.messageId };
  }

  const idle = (session: string): LaneOutcome | undefined => {
    const run = runOf(session);
    if (run === undefined) return { ok: false, reason: 'unreachable', detail: 'no Copilot session hosted by a run' };
    // A send while idle would begin a turn, which only a start may do (D43).
    return run.turn === undefined ? { ok: false, reason: 'idle', detail: 'no turn is running' } : undefined;
  };

  const listen = (): Promise<void> =>
    (listening ??= listenOn(opts.socketPath, (socket) => joinRun(socket, runs, fact)).then(
      (s) => {
        server = s;
      },
      (err: unknown) => {
        listening = undefined;
        throw err;
      },
    ));

  return {
    ...COPILOT_SERVER_LANE,
    facts$: facts$.asObservable(),
    async open() {
      await listen();
      return { address: opts.socketPath };
    },
    reaches: (session) => runOf(session) !== undefined,
    steer: async (req) => idle(req.session) ?? send(req, 'immediate', false),
    queue: async (req) => idle(req.session) ?? send(req, 'enqueue', false),
    async startTurn(req) {
      const run = runOf(req.session);
      if (run?.turn !== undefined) {
        const o = await send(req, req.otherwise === 'queue' ? 'enqueue' : 'immediate', false);
        return o.ok ? { ...o, became: req.otherwise } : o;
      }
      return send(req, 'enqueue', true);
    },
    async withdraw(req) {
      const run = runOf(req.session);
      if (run === undefined) return { error: 'no Copilot session hosted by a run' };
      const entry = [...run.sent].find(([, m]) => m.commandId === req.commandId);
      if (entry === undefined) return { removed: false };
      try {
        const r = (await call(run, 'session.queue.withdrawMessage', {
          messageId: entry[0],
          expectedPrompt: entry[1].text,
        })) as { removed?: unknown };
        if (r.removed === true) run.sent.delete(entry[0]);
        return { removed: r.removed === true };
      } catch (e) {
        return { error: (e as Error).message };
      }
    },
    async interrupt(session) {
      const run = runOf(session);
      if (run?.turn === undefined) return { ok: false, detail: 'no turn is running' };
      try {
        const r = (await call(run, 'session.abort', { reason: 'remote_command' })) as { success?: unknown };
        if (r.success === true) run.aborted = true;
        return r.success === true ? { ok: true } : { ok: false, detail: 'the Copilot server did not abort the turn' };
      } catch (e) {
        return { ok: false, detail: (e as Error).message };
      }
    },
    async answer(session, approvalId, approved, reason) {
      const run = runOf(session);
      if (run === undefined) return { ok: false, detail: 'no Copilot session hosted by a run' };
      const result = approved
        ? { kind: 'approve-once' }
        : { kind: 'reject', ...(reason === undefined ? {} : { feedback: reason }) };
      try {
        await call(run, 'session.permissions.handlePendingPermissionRequest', { requestId: approvalId, result });
        return { ok: true };
      } catch (e) {
        return { ok: false, detail: (e as Error).message };
      }
    },
    async close() {
      await closeLaneServer(server, opts.socketPath, runs);
      server = undefined;
      facts$.complete();
    },
  };
}
