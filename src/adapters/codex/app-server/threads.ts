// What the Codex app-server lane knows of the server's threads, kept from its notifications: the
// threads it follows and their running turn, and the steers awaiting their receipt. Each
// notification becomes the lane's facts here, its approvals through approvals.ts and its turns'
// ends through turns.ts; what a message means is in messages.ts.
import type { LaneFact } from '../../../streams/lane.js';
import { approvalBook, type Asked } from './approvals.js';
import { str, userMessageOf } from './messages.js';
import type { RpcClient, ServerRequest } from './rpc.js';
import type { TurnBook } from './turns.js';

export interface ThreadTracker {
  /** Threads this client resumed (reached), with their running turn. */
  readonly threads: Map<string, { turn?: string }>;
  /** Approvals asked and not settled, by their request id. */
  readonly asked: Map<string, Asked>;
  /** Steers sent, by command id, until their receipt. */
  readonly sent: Set<string>;
  /** D43: of those, the ones sent with `turn/start` (their receipt says whether they began the turn). */
  readonly starts: Set<string>;
  onNotification(method: string, p: Record<string, unknown>): void;
  onRequest(r: ServerRequest): void;
  /** Follows the threads already running on a server (one reused). */
  followLoaded(c: RpcClient): Promise<void>;
  /** Forgets everything, the connection being gone. */
  clear(): void;
}

/**
 * The receipts of what was sent here: a steer's or a start's user message, `clientId` echoing the
 * command id (observed ~40 ms before the request). D43: each turn's first user message is kept by
 * turn id (`''`: one not sent here, the person's); on a busy thread `turn/start` steers the running
 * turn, so a start began the turn only if its message came first.
 */
function receiptBook(fact: (f: LaneFact) => void) {
  const sent = new Set<string>();
  const starts = new Set<string>();
  const first = new Map<string, string>();
  return {
    sent,
    starts,
    onItem(threadId: string | undefined, p: Record<string, unknown>): void {
      const item = p.item as { type?: unknown; clientId?: unknown } | undefined;
      const turnId = typeof p.turnId === 'string' ? p.turnId : undefined;
      if (item?.type === 'userMessage' && turnId !== undefined && !first.has(turnId)) {
        first.set(turnId, typeof item.clientId === 'string' ? item.clientId : '');
        if (first.size > 64) first.delete(first.keys().next().value as string);
      }
      const m = userMessageOf(p);
      if (threadId === undefined || m?.clientId === undefined || !sent.delete(m.clientId)) return;
      const start = starts.delete(m.clientId);
      fact({
        kind: 'delivered',
        session: threadId,
        at: Date.now(),
        commandId: m.clientId,
        ref: m.turnId ?? '',
        ...(start ? { started: m.turnId !== undefined && first.get(m.turnId) === m.clientId } : {}),
      });
    },
    clear(): void {
      sent.clear();
      starts.clear();
      first.clear();
    },
  };
}

/** `rpc`: the connection now, if any (a thread is followed through it). */
export function threadTracker(
  rpc: () => RpcClient | undefined,
  fact: (f: LaneFact) => void,
  turns: TurnBook,
): ThreadTracker {
  const threads = new Map<string, { turn?: string }>();
  /** Threads the server announced, followed once they can be resumed. */
  const announced = new Set<string>();
  const approvals = approvalBook(fact, (threadId) => threads.has(threadId));
  const receipts = receiptBook(fact);

  async function follow(threadId: string): Promise<void> {
    const c = rpc();
    if (threads.has(threadId) || c === undefined) return;
    threads.set(threadId, {});
    try {
      const r = (await c.call('thread/resume', { threadId })) as {
        thread?: { turns?: { id: string; status: string }[] };
      };
      const running = r.thread?.turns?.find((t) => t.status === 'inProgress');
      fact({ kind: 'attached', session: threadId, at: Date.now() });
      if (running !== undefined && threads.get(threadId)?.turn === undefined) {
        threads.set(threadId, { turn: running.id });
        turns.started(threadId);
        fact({ kind: 'turn.started', session: threadId, at: Date.now(), turnId: running.id });
      }
    } catch {
      // Observed: a thread just announced has no rollout yet ("no rollout found"); its next
      // notification (its status turning active as its first turn starts) tries again.
      threads.delete(threadId);
    }
  }

  /** An item starts or completes: the open commands, what its approvals learn, a steer's receipt. */
  function onItem(method: string, threadId: string | undefined, p: Record<string, unknown>): void {
    const item = p.item as { id?: unknown; status?: unknown; type?: unknown } | undefined;
    if (threadId !== undefined && typeof item?.id === 'string') {
      if (item.type === 'commandExecution') {
        const command = str((item as { command?: unknown }).command);
        if (method === 'item/started' && command !== undefined) turns.commands.set(`${threadId}/${item.id}`, command);
        else turns.commands.delete(`${threadId}/${item.id}`);
      }
      approvals.onItem(method, threadId, item as { id: string; status?: unknown; type?: unknown });
    }
    receipts.onItem(threadId, p);
  }

  function onNotification(method: string, p: Record<string, unknown>): void {
    const threadId = typeof p.threadId === 'string' ? p.threadId : undefined;
    const turn = p.turn as { id?: string; status?: string } | undefined;
    if (threadId !== undefined && announced.has(threadId) && !threads.has(threadId)) void follow(threadId);
    switch (method) {
      case 'thread/started': {
        const id = (p.thread as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string') return;
        announced.add(id);
        void follow(id);
        return;
      }
      case 'turn/started':
        if (threadId === undefined || typeof turn?.id !== 'string' || !threads.has(threadId)) return;
        threads.set(threadId, { turn: turn.id });
        turns.started(threadId);
        fact({ kind: 'turn.started', session: threadId, at: Date.now(), turnId: turn.id });
        return;
      case 'serverRequest/resolved':
        approvals.resolved(String(p.requestId));
        return;
      case 'turn/completed':
        if (threadId === undefined || typeof turn?.id !== 'string' || !threads.has(threadId)) return;
        approvals.turnCompleted(threadId);
        threads.set(threadId, {});
        turns.ended(threadId, {
          kind: 'turn.ended',
          session: threadId,
          at: Date.now(),
          turnId: turn.id,
          status: String(turn.status),
          // Observed: `turn/interrupt` ends the turn with status `interrupted` within ~100 ms.
          interrupted: turn.status === 'interrupted',
        });
        return;
      case 'item/started':
      case 'item/completed':
        onItem(method, threadId, p);
        return;
      case 'thread/closed':
        if (threadId !== undefined) announced.delete(threadId);
        if (threadId === undefined || !threads.delete(threadId)) return;
        fact({ kind: 'detached', session: threadId, at: Date.now(), detail: 'the thread was closed' });
        return;
    }
  }

  return {
    threads,
    asked: approvals.asked,
    sent: receipts.sent,
    starts: receipts.starts,
    onNotification,
    onRequest: approvals.onRequest,
    async followLoaded(c) {
      const loaded = (await c.call('thread/loaded/list', {}).catch(() => ({ data: [] }))) as { data?: string[] };
      for (const id of loaded.data ?? []) void follow(id);
    },
    clear() {
      threads.clear();
      announced.clear();
      approvals.clear();
      receipts.clear();
      turns.clear();
    },
  };
}
