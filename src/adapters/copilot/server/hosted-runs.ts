// The runs joined on the Copilot server lane's socket, as the lane tracks each: its session and
// turn, the messages it sent awaiting their receipt, its calls awaiting an answer; and what each
// session event of the Copilot server means as the lane's facts (copilot-opencode-observed §1).
import type { Socket } from 'node:net';
import type { LaneFact } from '../../../streams/lane.js';
import { copilotPermission } from './permission.js';
import { wireReader, writeWire, type CopilotEvent, type WireLine } from './wire.js';

type Fact = (f: LaneFact) => void;

/** A message the lane sent, until its receipt: the command, its text, and how it was sent. */
interface Sent {
  commandId: string;
  text: string;
  start: boolean;
}

/** One hosted session as the lane tracks it. */
export interface HostedRun {
  socket: Socket;
  session?: string;
  turn?: string;
  turns: number;
  aborted: boolean;
  /** By the message id the send answered. */
  sent: Map<string, Sent>;
  /** Receipts seen before their send's answer (the event may overtake the answer): id → delivery. */
  early: Map<string, string>;
  /** Shell commands running, by tool call id; and the one a steer just moved to the background. */
  shells: Map<string, string>;
  backgrounded?: string;
  calls: Map<number, (a: { result?: unknown; error?: string }) => void>;
}

let nextCall = 0;

/** One server call through the run; its result, or why there is none. */
export function callRun(
  run: HostedRun,
  method: string,
  params: Record<string, unknown>,
  answerMs: number,
): Promise<unknown> {
  const id = ++nextCall;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      run.calls.delete(id);
      reject(new Error(`${method}: the Copilot server did not answer in time`));
    }, answerMs);
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
export function receipt(run: HostedRun, messageId: string, delivery: string, fact: Fact): void {
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
    // Observed on 1.0.102: an `immediate` send ends a running sync shell call by moving it to the
    // background, and its tool result says so just before the steering user.message.
    ...(delivery === 'steering' && run.backgrounded !== undefined
      ? { backgrounded: { command: run.backgrounded } }
      : {}),
  });
  if (delivery === 'steering') run.backgrounded = undefined;
}

/** The text a completed tool call gave the model (`result.content`), where it is text. */
const resultText = (data: Record<string, unknown>): string => {
  const content = (data.result as { content?: unknown } | undefined)?.content;
  return typeof content === 'string' ? content : '';
};

function onEvent(run: HostedRun, e: CopilotEvent, fact: Fact): void {
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
      if (run.sent.has(id)) receipt(run, id, delivery, fact);
      else run.early.set(id, delivery);
      if (run.early.size > 64) run.early.delete(run.early.keys().next().value!);
      return;
    }
    case 'abort':
      run.aborted = true;
      return;
    case 'tool.execution_start': {
      const command = (data.arguments as { command?: unknown } | undefined)?.command;
      if (typeof data.toolCallId === 'string' && typeof command === 'string') run.shells.set(data.toolCallId, command);
      return;
    }
    case 'tool.execution_complete': {
      const id = typeof data.toolCallId === 'string' ? data.toolCallId : '';
      const command = run.shells.get(id);
      run.shells.delete(id);
      if (command !== undefined && /moved to background by the user/.test(resultText(data))) run.backgrounded = command;
      return;
    }
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

function onLine(run: HostedRun, l: WireLine, fact: Fact): void {
  if (l.type === 'session' && run.session === undefined) {
    run.session = l.sessionId;
    fact({ kind: 'attached', session: l.sessionId, at: Date.now() });
  } else if (l.type === 'event') onEvent(run, l.event, fact);
  else if (l.type === 'answer') {
    run.calls.get(l.id)?.(l);
    run.calls.delete(l.id);
  }
}

/** A run that joined on `socket`: tracked in `runs` until its socket closes. */
export function joinRun(socket: Socket, runs: Set<HostedRun>, fact: Fact): void {
  const run: HostedRun = {
    socket,
    turns: 0,
    aborted: false,
    sent: new Map(),
    early: new Map(),
    shells: new Map(),
    calls: new Map(),
  };
  runs.add(run);
  socket.on(
    'data',
    wireReader((l) => onLine(run, l, fact)),
  );
  socket.on('error', () => undefined);
  socket.on('close', () => {
    runs.delete(run);
    for (const c of run.calls.values()) c({ error: 'the run ended' });
    if (run.session !== undefined)
      fact({ kind: 'detached', session: run.session, at: Date.now(), detail: 'the Copilot session ended' });
  });
}
