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
  const { threads, asked, sent } = tracker;
  const { killing } = turns;

  return {
    ...APP_SERVER_LANE,
    facts$: facts$.asObservable(),
    async open() {
      await server.ready();
      return { address: server.address, pid: server.ownPid ?? null };
    },
    reaches: (session) => server.rpc !== undefined && threads.has(session),
    async steer(req: LaneRequest): Promise<LaneOutcome> {
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
        if (err instanceof RpcFailure) {
          const known = STEER_REFUSALS.find((x) => x.match.test(err.message));
          return { ok: false, reason: known?.reason ?? 'refused', detail: err.message };
        }
        return { ok: false, reason: 'unreachable', detail: err instanceof RpcUnreachable ? err.message : String(err) };
      }
    },
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
