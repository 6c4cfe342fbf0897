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
import type { LaneFact, LaneOutcome, LaneRequest, SteeringLane } from '../../../streams/lane.js';
import { copilotPermission } from './permission.js';
import { wireReader, writeWire, type CopilotEvent, type WireLine } from './wire.js';

/** A message the lane sent, until its receipt: the command, its text, and how it was sent. */
interface Sent {
  commandId: string;
  text: string;
  start: boolean;
}

/** One hosted session as the lane tracks it. */
interface HostedRun {
  socket: Socket;
  session?: string;
  turn?: string;
  turns: number;
  aborted: boolean;
  /** By the message id the send answered. */
  sent: Map<string, Sent>;
  /** Receipts seen before their send's answer (the event may overtake the answer): id → delivery. */
  early: Map<string, string>;
  calls: Map<number, (a: { result?: unknown; error?: string }) => void>;
}

export interface CopilotLaneOptions {
  socketPath: string;
  answerMs?: number;
}

export const COPILOT_SERVER_LANE = {
  name: 'server',
  deliveries: ['steer', 'queue'],
  how: 'host it with `aep-steer run copilot`',
} as const;

export function copilotServerLane(opts: CopilotLaneOptions): SteeringLane {
  const facts$ = new Subject<LaneFact>();
  const runs = new Set<HostedRun>();
  let server: Server | undefined;
  let listening: Promise<void> | undefined;
  let nextCall = 0;
  const fact = (f: LaneFact): void => facts$.next(f);
  const runOf = (session: string): HostedRun | undefined => [...runs].find((r) => r.session === session);

  function call(run: HostedRun, method: string, params: Record<string, unknown>): Promise<unknown> {
    const id = ++nextCall;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        run.calls.delete(id);
        reject(new Error(`${method}: the Copilot server did not answer in time`));
      }, opts.answerMs ?? 15_000);
      run.calls.set(id, (a) => {
        clearTimeout(timer);
        if (a.error !== undefined) reject(new Error(a.error));
        else resolve(a.result);
      });
      if (!writeWire(run.socket, { type: 'call', id, method, params })) {
        clearTimeout(timer);
        run.calls.delete(id);
        reject(new Error('the run is gone'));
      }
    });
  }

  /** The receipt of one message: delivered, naming the turn it began where it began one (D43). */
  function receipt(run: HostedRun, messageId: string, delivery: string): void {
    const m = run.sent.get(messageId);
    if (m === undefined || run.session === undefined) return;
    run.sent.delete(messageId);
    const began = delivery === 'idle';
    fact({
      kind: 'delivered',
      session: run.session,
      at: Date.now(),
      commandId: m.commandId,
      ref: began && m.start && run.turn !== undefined ? run.turn : messageId,
      ...(m.start ? { started: began } : {}),
    });
  }

  function onEvent(run: HostedRun, e: CopilotEvent): void {
    const session = run.session;
    if (session === undefined || e.agentId !== undefined) return;
    const at = Date.now();
    const data = e.data ?? {};
    switch (e.type) {
      case 'user.message': {
        if (run.turn === undefined) {
          run.turn = `${session}:${++run.turns}`;
          run.aborted = false;
          fact({ kind: 'turn.started', session, at, turnId: run.turn });
        }
        const id = data.messageId;
        const delivery = typeof data.delivery === 'string' ? data.delivery : 'idle';
        if (typeof id !== 'string') return;
        if (run.sent.has(id)) receipt(run, id, delivery);
        else run.early.set(id, delivery);
        if (run.early.size > 64) run.early.delete(run.early.keys().next().value!);
        return;
      }
      case 'abort':
        run.aborted = true;
        return;
      case 'session.idle': {
        if (run.turn === undefined) return;
        const turnId = run.turn;
        run.turn = undefined;
        fact({
          kind: 'turn.ended',
          session,
          at,
          turnId,
          status: run.aborted ? 'interrupted' : 'completed',
          interrupted: run.aborted,
        });
        return;
      }
      case 'permission.requested': {
        const p = copilotPermission(data);
        if (p !== undefined) fact({ kind: 'approval', session, at, approvalId: p.id, request: p.request });
        return;
      }
      case 'permission.completed': {
        const id = data.requestId;
        const kind = (data.result as { kind?: unknown } | undefined)?.kind;
        if (typeof id !== 'string') return;
        fact({
          kind: 'approval.resolved',
          session,
          at,
          approvalId: id,
          ...(typeof kind === 'string' && kind !== 'cancelled' ? { approved: kind.startsWith('approved') } : {}),
        });
        return;
      }
    }
  }

  function onLine(run: HostedRun, l: WireLine): void {
    if (l.type === 'session' && run.session === undefined) {
      run.session = l.sessionId;
      fact({ kind: 'attached', session: l.sessionId, at: Date.now() });
    } else if (l.type === 'event') onEvent(run, l.event);
    else if (l.type === 'answer') {
      run.calls.get(l.id)?.(l);
      run.calls.delete(l.id);
    }
  }

  function join(socket: Socket): void {
    const run: HostedRun = {
      socket,
      turns: 0,
      aborted: false,
      sent: new Map(),
      early: new Map(),
      calls: new Map(),
    };
    runs.add(run);
    socket.on(
      'data',
      wireReader((l) => onLine(run, l)),
    );
    socket.on('error', () => undefined);
    socket.on('close', () => {
      runs.delete(run);
      for (const c of run.calls.values()) c({ error: 'the run ended' });
      if (run.session !== undefined)
        fact({ kind: 'detached', session: run.session, at: Date.now(), detail: 'the Copilot session ended' });
    });
  }

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
      receipt(run, r.messageId, early);
    }
    return { ok: true, ref: r.messageId };
  }

  const idle = (session: string): LaneOutcome | undefined => {
    const run = runOf(session);
    if (run === undefined) return { ok: false, reason: 'unreachable', detail: 'no Copilot session hosted by a run' };
    // A send while idle would begin a turn, which only a start may do (D43).
    return run.turn === undefined ? { ok: false, reason: 'idle', detail: 'no turn is running' } : undefined;
  };

  function listen(): Promise<void> {
    listening ??= new Promise<void>((resolve, reject) => {
      mkdirSync(dirname(opts.socketPath), { recursive: true, mode: 0o700 });
      chmodSync(dirname(opts.socketPath), 0o700);
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
      for (const r of runs) r.socket.destroy();
      await new Promise((r) => (server === undefined ? r(undefined) : server.close(() => r(undefined))));
      if (server !== undefined) rmSync(opts.socketPath, { force: true });
      server = undefined;
      facts$.complete();
    },
  };
}
