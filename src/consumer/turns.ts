// D45: what an orchestrator needs of a session it started: its turns, read from the stream at
// the reader's own capture ceiling. `waitFor` returns once a turn ends, a request waits or the
// session ends (or its bound passes: "still running", never a hang); `readTurn` gives one turn's
// end and, where the reader's capture allows, the agent's final answer (`run.finished` summary).
import type { AepEvent } from '../protocol/envelope.js';
import type { RelayConsumer } from './connection.js';
import { pendingOf, type PendingRequest } from './pending.js';

/** How a turn ended. */
type TurnEnd = 'finished' | 'cancelled' | 'failed';

export interface Turn {
  /** 1-based, in the order the session's turns began. */
  n: number;
  run?: string;
  ended?: TurnEnd;
  /** The agent's final answer, where the stream carried it and the reader may see it. */
  answer?: string;
  /** The end event's capture as served: `metadata` means the answer, if any, was withheld. */
  capture?: string;
  /** Why it failed, or who cancelled it, as the end event says. */
  why?: string;
  endedAt?: string;
}

/** One session's state as its stream shows it. */
export interface SessionTurns {
  turns: Turn[];
  requests: PendingRequest[];
  ended?: { reason: string; at: string };
}

const TERMINAL: Record<string, TurnEnd> = {
  'run.finished': 'finished',
  'run.cancelled': 'cancelled',
  'run.failed': 'failed',
};
const isEnd = (type: string): boolean => type === 'session.ended' || /^x\.[a-z0-9_-]+\.session\.closed$/.test(type);
const isReopen = (type: string): boolean => /^x\.[a-z0-9_-]+\.session\.reopened$/.test(type);

/** Folds one session's events, oldest first, into its turns, open requests and end. */
export function foldTurns(events: readonly AepEvent[], now = Date.now()): SessionTurns {
  const turns: Turn[] = [];
  const byRun = new Map<string, Turn>();
  let ended: SessionTurns['ended'];
  const open = (run: string | undefined): Turn => {
    const t: Turn = { n: turns.length + 1 };
    if (run !== undefined) {
      t.run = run;
      byRun.set(run, t);
    }
    turns.push(t);
    return t;
  };
  for (const e of events) {
    if (e.type === 'run.started') {
      if (e.run === undefined || !byRun.has(e.run)) open(e.run);
      continue;
    }
    const how = TERMINAL[e.type];
    if (how !== undefined) {
      // A terminal with no start seen (a vendor that names no run opening): the newest open turn.
      const t =
        (e.run === undefined ? undefined : byRun.get(e.run)) ??
        [...turns].reverse().find((x) => x.ended === undefined) ??
        open(e.run);
      if (t.ended !== undefined) continue;
      t.ended = how;
      t.endedAt = e.time;
      if (e.capture !== undefined) t.capture = e.capture;
      const d = (e.data ?? {}) as Record<string, unknown>;
      if (typeof d.summary === 'string' && d.summary !== '') t.answer = d.summary;
      const why = typeof d.reason === 'string' ? d.reason : typeof d.by === 'string' ? `by ${d.by}` : undefined;
      if (why !== undefined) t.why = why;
      continue;
    }
    if (isEnd(e.type)) {
      const d = (e.data ?? {}) as Record<string, unknown>;
      ended = { reason: typeof d.reason === 'string' ? d.reason : 'normal', at: e.time };
    } else if (isReopen(e.type)) ended = undefined;
  }
  return { turns, requests: pendingOf(events, now), ...(ended === undefined ? {} : { ended }) };
}

export type WaitFor = 'turn-end' | 'request' | 'end';

export type WaitOutcome =
  | { outcome: 'turn-ended'; session: string; turn: Turn }
  | { outcome: 'request'; session: string; request: PendingRequest }
  | { outcome: 'ended'; session: string; reason: string; turns: number }
  /** The bound passed first: the session still runs (or has not begun a turn). */
  | { outcome: 'timeout'; session: string; running: boolean; turns: number; waitedMs: number }
  | { outcome: 'unreachable'; session: string; detail: string; code?: string };

export interface WaitRequest {
  session: string;
  /** What ends the wait; the session's end always does (nothing else can come after it). Default: turn-end and request. */
  for?: readonly WaitFor[];
  /** Only a turn after this one counts (what an earlier wait or read returned); default: the newest. */
  afterTurn?: number;
  timeoutMs: number;
}

/** What in `state` answers the wait now, if anything. */
function waitAnswer(state: SessionTurns, req: WaitRequest): WaitOutcome | undefined {
  const wants = new Set(req.for ?? ['turn-end', 'request']);
  const session = req.session;
  if (wants.has('request') && state.requests.length > 0)
    return { outcome: 'request', session, request: state.requests[0]! };
  const after = req.afterTurn ?? 0;
  const last = state.turns.at(-1);
  if (wants.has('turn-end') && last?.ended !== undefined && last.n > after)
    return { outcome: 'turn-ended', session, turn: last };
  if (state.ended !== undefined)
    return { outcome: 'ended', session, reason: state.ended.reason, turns: state.turns.length };
  return undefined;
}

/**
 * Follows the session from its first event (the relay replays its history, then its live
 * events) until `waitAnswer` has an answer or `timeoutMs` passes.
 */
export async function waitFor(consumer: RelayConsumer, req: WaitRequest): Promise<WaitOutcome> {
  const started = Date.now();
  const events: AepEvent[] = [];
  let replayed = false;
  let done: ((o: WaitOutcome) => void) | undefined;
  const answered = new Promise<WaitOutcome>((resolve) => (done = resolve));
  const check = (): void => {
    if (!replayed) return;
    const a = waitAnswer(foldTurns(events), req);
    if (a !== undefined) done?.(a);
  };
  const sub = await consumer.subscribe(
    { filter: { session: req.session }, from: [{ session: req.session }] },
    {
      onEvent: (e) => {
        events.push(e);
        check();
      },
    },
  );
  const timer = setTimeout(() => {
    const s = foldTurns(events);
    const last = s.turns.at(-1);
    done?.({
      outcome: 'timeout',
      session: req.session,
      running: last !== undefined && last.ended === undefined,
      turns: s.turns.length,
      waitedMs: Date.now() - started,
    });
  }, req.timeoutMs);
  try {
    // A roster round trip behind the replay is a barrier: its reply comes after the last replayed event.
    await consumer.roster();
    replayed = true;
    check();
    return await answered;
  } finally {
    clearTimeout(timer);
    sub.close();
  }
}

export type ReadOutcome =
  | { outcome: 'read'; session: string; turn: Turn; turns: number; withheld: boolean }
  | { outcome: 'no-turn'; session: string; turns: number; asked: number | 'last' }
  | { outcome: 'unreachable'; session: string; detail: string; code?: string };

/** A turn of the session as this reader may see it: the newest (`last`) or the `n`th. */
export async function readTurn(
  consumer: RelayConsumer,
  req: { session: string; turn: number | 'last' },
): Promise<ReadOutcome> {
  const events: AepEvent[] = [];
  const sub = await consumer.subscribe(
    { filter: { session: req.session }, from: [{ session: req.session }] },
    { onEvent: (e) => events.push(e) },
  );
  await consumer.roster();
  sub.close();
  const { turns } = foldTurns(events);
  const turn = req.turn === 'last' ? turns.at(-1) : turns[req.turn - 1];
  if (turn === undefined) return { outcome: 'no-turn', session: req.session, turns: turns.length, asked: req.turn };
  // Served at metadata (or none): whatever the agent said was left out for this reader.
  const withheld = turn.ended !== undefined && (turn.capture === 'metadata' || turn.capture === 'none');
  return { outcome: 'read', session: req.session, turn, turns: turns.length, withheld };
}
