// What the Codex app-server's messages mean to its lane (lane.ts), with where each was observed:
// the refusals of `turn/steer`, the approvals the server asks, the receipt of a steer, and the
// approval fact one of them becomes.
import type { LaneFact } from '../../../streams/lane.js';

const OBSERVED = 'native-lanes.md "Observed on the pinned binaries", Codex 0.171.0 app-server';

/**
 * `turn/steer` refusals (JSON-RPC -32600, no structured data in 0.171.0: the message is matched).
 * Both "the turn is over" answers are D31 `turn-ended`: never retried as a `turn/start`.
 */
export const STEER_REFUSALS: readonly { match: RegExp; reason: 'turn-ended' | 'refused'; evidence: string }[] = [
  { match: /no active turn/i, reason: 'turn-ended', evidence: `${OBSERVED}: "no active turn to steer"` },
  {
    match: /expected active turn id/i,
    reason: 'turn-ended',
    evidence: `${OBSERVED}: "expected active turn id \`X\` but found \`Y\`"`,
  },
  { match: /thread not found/i, reason: 'refused', evidence: `${OBSERVED}: "thread not found: …"` },
];

/** One kind of approval: the tool name the hook lane reports for the same action, and what it does. */
export interface ApprovalKind {
  tool: string;
  detail: (p: Record<string, unknown>, item?: Record<string, unknown>) => string | undefined;
}

/**
 * The approvals the server asks every client of the thread for (server requests; the first answer
 * wins and `serverRequest/resolved` tells the others), with the tool name the hook lane reports for
 * the same action and what it does (D35), from the request or from the item it names.
 */
export const APPROVALS: Record<string, ApprovalKind> = {
  'item/commandExecution/requestApproval': {
    tool: 'Bash',
    detail: (p) => (typeof p.command === 'string' ? p.command : undefined),
  },
  // Observed: the request carries no paths; its `fileChange` item, started just before, lists them.
  'item/fileChange/requestApproval': {
    tool: 'apply_patch',
    detail: (p, item) =>
      changesOf(item) ?? (typeof p.grantRoot === 'string' ? `write under ${p.grantRoot}` : str(p.reason)),
  },
};
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `add /w/a.txt, update /w/b.ts`: a fileChange item's `changes` (`{path, kind: {type}}`), as the TUI lists them. */
export function changesOf(item: Record<string, unknown> | undefined): string | undefined {
  const changes = Array.isArray(item?.changes) ? (item.changes as Record<string, unknown>[]) : [];
  const said = changes
    .filter((c) => typeof c?.path === 'string')
    .map((c) => {
      const kind = str((c.kind as { type?: unknown } | undefined)?.type) ?? str(c.kind);
      return kind === undefined ? String(c.path) : `${kind} ${String(c.path)}`;
    });
  return said.length === 0 ? undefined : said.join(', ');
}

/**
 * `deny` is `decline` (not run; the turn goes on, the model told "rejected by user"), as deny means
 * on every vendor (D34). Observed: an escalated command's `availableDecisions` lists `accept` and
 * `cancel` only, yet 0.171.0 takes `decline` there as well; `cancel` would interrupt the turn.
 */
export const DENY = 'decline';

/** A user message item's client id (a steer's command id echoed) and the turn it joined. */
export const userMessageOf = (params: Record<string, unknown>): { clientId?: string; turnId?: string } | undefined => {
  const item = params.item as Record<string, unknown> | undefined;
  if (item?.type !== 'userMessage' || typeof item.clientId !== 'string') return undefined;
  return { clientId: item.clientId, ...(typeof params.turnId === 'string' ? { turnId: params.turnId } : {}) };
};

/** The approval fact of a server request of this kind, saying what it does where it can. */
export function approvalFact(threadId: string, approvalId: string, kind: ApprovalKind, detail?: string): LaneFact {
  return {
    kind: 'approval',
    session: threadId,
    at: Date.now(),
    approvalId,
    request: {
      kind: 'permission',
      prompt: `Permission requested: ${kind.tool}`,
      subject: kind.tool,
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
      context: { tool_name: kind.tool },
      // The TUI shows the same request and may answer it first.
      respondVia: ['control', 'oob'],
      ...(detail === undefined ? {} : { detail }),
    },
  };
}
