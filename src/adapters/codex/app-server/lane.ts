// The Codex app-server lane (D30): an app-server this adapter owns on a private Unix socket
// (`codex app-server --listen unix://PATH`), which the person's stock TUI joins with
// `codex --remote unix://PATH` (`aep-steer run codex`). The lane follows every thread the server
// announces (`thread/started` reaches every client; `thread/resume` subscribes to its turns and
// items) and steers the running turn with `turn/steer`. Facts and answers as in streams/lane.ts;
// what each vendor message means is in messages.ts, with where it was observed; the threads it
// follows in threads.ts, their turns in turns.ts, the server and its connection in connection.ts.
import { Subject } from 'rxjs';
import type { LaneFact, LaneOutcome, LaneRequest, SteeringLane } from '../../../streams/lane.js';
import { appServerConnection, type CodexLaneOptions } from './connection.js';
import { DENY, STEER_REFUSALS } from './messages.js';
import { RpcFailure, RpcUnreachable } from './rpc.js';
import { threadTracker } from './threads.js';
import { orderedFacts, turnBook } from './turns.js';

/** What the app-server lane is to the table, one server or all of a state directory's: its name, deliveries and way in. */
export const APP_SERVER_LANE = {
  name: 'app-server',
  deliveries: ['steer'],
  how: 'start it with `aep-steer run codex`',
} as const satisfies Pick<SteeringLane, 'name' | 'deliveries' | 'how'>;

/** A refused or failed call as the lane's answer (a known steer refusal keeps its D31 reason). */
function failed(err: unknown): LaneOutcome {
  if (err instanceof RpcFailure) {
    const known = STEER_REFUSALS.find((x) => x.match.test(err.message));
    return { ok: false, reason: known?.reason ?? 'refused', detail: err.message };
  }
  return { ok: false, reason: 'unreachable', detail: err instanceof RpcUnreachable ? err.message : String(err) };
}

export function codexAppServerLane(opts: CodexLaneOptions): SteeringLane {
  const facts$ = new Subject<LaneFact>();
  const facts = orderedFacts(facts$);
  let closing = false;
  const turns = turnBook(facts, () => server.serverPid());
  const tracker = threadTracker(() => server.rpc, facts.fact, turns);
  const server = appServerConnection(opts, {
    onNotification: tracker.onNotification,
    onRequest: tracker.onRequest,
    // Threads already running on a reused server are followed too.
    connected: tracker.followLoaded,
    lost(why) {
      tracker.clear();
      if (!closing) facts.fact({ kind: 'lost', at: Date.now(), detail: why });
    },
  });
  const { threads, asked, sent, starts } = tracker;
  const { killing } = turns;

  /** D31: into the running turn, named by its id (`turn/steer` refuses any other). */
  async function steer(req: LaneRequest): Promise<LaneOutcome> {
    const c = server.rpc;
    const turn = threads.get(req.session)?.turn;
    if (c === undefined || !threads.has(req.session))
      return { ok: false, reason: 'unreachable', detail: 'the app-server does not reach this session' };
    if (turn === undefined) return { ok: false, reason: 'idle', detail: 'no turn is running' };
    sent.add(req.commandId);
    try {
      const r = (await c.call('turn/steer', {
        threadId: req.session,
        input: [{ type: 'text', text: req.text }],
        expectedTurnId: turn,
        clientUserMessageId: req.commandId,
      })) as { turnId?: string };
      return { ok: true, ...(typeof r.turnId === 'string' ? { ref: r.turnId } : {}) };
    } catch (err) {
      sent.delete(req.commandId);
      return failed(err);
    }
  }

  /**
   * D43: `turn/start` on the thread the person's TUI shows, which shows the turn as its own. On a
   * thread that is busy (or turned busy meanwhile) the server steers the running turn instead: the
   * receipt tells which it was.
   */
  async function startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    const c = server.rpc;
    const t = threads.get(req.session);
    if (c === undefined || t === undefined)
      return { ok: false, reason: 'unreachable', detail: 'the app-server does not reach this session' };
    // On a busy thread `turn/start` steers the running turn itself (start-or-steer), which is what
    // a start that lost the race asks for as `steer`; the lane has no queue for the next turn.
    if (t.turn !== undefined && req.otherwise === 'queue')
      return {
        ok: false,
        reason: 'refused',
        detail: 'a turn began meanwhile, and the app-server keeps no queue for the next turn',
      };
    sent.add(req.commandId);
    starts.add(req.commandId);
    try {
      const r = (await c.call('turn/start', {
        threadId: req.session,
        input: [{ type: 'text', text: req.text }],
        clientUserMessageId: req.commandId,
      })) as { turn?: { id?: unknown } };
      return { ok: true, ...(typeof r.turn?.id === 'string' ? { ref: r.turn.id } : {}) };
    } catch (err) {
      sent.delete(req.commandId);
      starts.delete(req.commandId);
      return failed(err);
    }
  }

  return {
    ...APP_SERVER_LANE,
    facts$: facts$.asObservable(),
    async open() {
      await server.ready();
      return { address: server.address, pid: server.ownPid ?? null };
    },
    reaches: (session) => server.rpc !== undefined && threads.has(session),
    steer,
    startTurn,
    async interrupt(session, o) {
      const c = server.rpc;
      const turn = threads.get(session)?.turn;
      if (c === undefined || turn === undefined) return { ok: false, detail: 'no turn is running on the app-server' };
      // Set before the call: the turn's end may come before its answer.
      if (o?.killTools === true) killing.add(session);
      try {
        await c.call('turn/interrupt', { threadId: session, turnId: turn });
        return { ok: true };
      } catch (err) {
        killing.delete(session);
        return { ok: false, detail: String(err) };
      }
    },
    async answer(_session, approvalId, approved) {
      const a = asked.get(approvalId);
      const rpc = server.rpc;
      if (rpc === undefined || a === undefined) return { ok: false, detail: 'the app-server no longer asks this' };
      a.ours = true;
      rpc.respond(a.id, { decision: approved ? 'accept' : DENY });
      return { ok: true };
    },
    async close() {
      closing = true;
      await server.close();
      facts$.complete();
    },
  };
}
