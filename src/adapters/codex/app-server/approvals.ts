// The approvals the Codex app-server asks the clients of a thread the lane follows: each becomes
// an approval fact; one this lane answers is done when the server says it is resolved, one another
// client (the TUI) settled is told once its item ends, which says whether it was allowed.
import type { LaneFact } from '../../../streams/lane.js';
import { APPROVALS, approvalFact, str } from './messages.js';
import type { ServerRequest } from './rpc.js';

/** An approval asked and not settled: the thread, the item, the id to answer, and whether this lane answered it. */
export interface Asked {
  threadId: string;
  itemId?: string;
  id: number | string;
  ours?: boolean;
}

export interface ApprovalBook {
  /** Approvals asked and not settled, by their request id. */
  readonly asked: Map<string, Asked>;
  onRequest(r: ServerRequest): void;
  /** `serverRequest/resolved`: the first answer won, this lane's or another client's. */
  resolved(requestId: string): void;
  /** An item started or completed: the paths a file change names, an approval settled elsewhere told. */
  onItem(method: string, threadId: string, item: { id: string; status?: unknown; type?: unknown }): void;
  /** A turn completed: an approval settled elsewhere whose item never ended was cancelled with it. */
  turnCompleted(threadId: string): void;
  clear(): void;
}

/** `follows`: whether the lane follows the thread (the approvals of others are not its to tell). */
export function approvalBook(fact: (f: LaneFact) => void, follows: (threadId: string) => boolean): ApprovalBook {
  const asked = new Map<string, Asked>();
  /** Items running now that an approval may name (a fileChange's paths), by thread and item id. */
  const items = new Map<string, Record<string, unknown>>();
  /** Approvals settled elsewhere (the TUI), waiting for their item's end to say how. */
  const settledAt = new Map<string, string>();

  /** An approval settled by another client: its item's end says whether it was allowed. */
  function settledElsewhere(itemId: string | undefined, threadId: string, status: string | undefined): void {
    for (const [approvalId, a] of asked) {
      if (a.threadId !== threadId || (itemId !== undefined && a.itemId !== itemId) || !settledAt.has(approvalId))
        continue;
      asked.delete(approvalId);
      settledAt.delete(approvalId);
      const approved = status === undefined ? undefined : status !== 'declined';
      fact({
        kind: 'approval.resolved',
        session: threadId,
        at: Date.now(),
        approvalId,
        ...(approved === undefined ? {} : { approved }),
      });
    }
  }

  return {
    asked,
    onRequest(r) {
      const kind = APPROVALS[r.method];
      const threadId = str(r.params.threadId);
      if (kind === undefined || threadId === undefined || !follows(threadId)) return;
      const approvalId = String(r.id);
      if (asked.has(approvalId)) return;
      const itemId = str(r.params.itemId);
      asked.set(approvalId, {
        threadId,
        id: r.id,
        ...(itemId ? { itemId } : {}),
      });
      const detail = kind.detail(r.params, itemId === undefined ? undefined : items.get(`${threadId}/${itemId}`));
      fact(approvalFact(threadId, approvalId, kind, detail));
    },
    resolved(requestId) {
      const a = asked.get(requestId);
      if (a === undefined) return;
      if (a.ours === true) asked.delete(requestId);
      else settledAt.set(requestId, a.threadId);
    },
    onItem(method, threadId, item) {
      if (item.type === 'fileChange') {
        if (method === 'item/started') items.set(`${threadId}/${item.id}`, item as Record<string, unknown>);
        else items.delete(`${threadId}/${item.id}`);
      }
      if (method === 'item/completed') settledElsewhere(item.id, threadId, str(item.status));
    },
    turnCompleted(threadId) {
      settledElsewhere(undefined, threadId, undefined);
      for (const k of items.keys()) if (k.startsWith(`${threadId}/`)) items.delete(k);
    },
    clear() {
      asked.clear();
      items.clear();
      settledAt.clear();
    },
  };
}
