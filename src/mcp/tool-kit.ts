// What every steering tool of one server shares: the server's context (board, relay connection,
// sender, waits), the ledger of idempotency keys, and the guard that turns a relay that is down
// or refuses into a tool result instead of an error.
import type { McpServer } from '@modelcontextprotocol/server';
import type { Board } from '../consumer/board.js';
import type { RelayConsumer } from '../consumer/connection.js';
import { MCP_VOICE } from '../consumer/next-step.js';
import { FrameError } from '../protocol/errors.js';
import type { McpParent } from './mcp-parent.js';
import { refusal, result, type ToolResult } from './tool-result.js';

export interface ToolContext {
  board: Board;
  /** The open relay connection; undefined while the relay is unreachable. */
  consumer(): RelayConsumer | undefined;
  sender: string;
  relayUrl: string;
  /** Default and cap of `wait_ms`. */
  waitMs: number;
  maxWaitMs: number;
  /** D45: the orchestrator's own session, named as the parent of its spawns. */
  parent?: McpParent;
}

/** The relay's refusal of a subscription beyond its per-connection limit: it passes. */
const CAPACITY = 'limit-exceeded';

/** Tracks which text each idempotency key was first used with: a key names one instruction. */
class KeyLedger {
  private readonly texts = new Map<string, string>();
  check(id: string, text: string): boolean {
    const first = this.texts.get(id);
    if (first === undefined) this.texts.set(id, text);
    return first === undefined || first === text;
  }
}

export const unreachable = (ctx: ToolContext): ToolResult =>
  result(
    `Relay unreachable at ${ctx.relayUrl}${ctx.board.error ? ` (${ctx.board.error})` : ''}; the server keeps retrying; ${MCP_VOICE.relayDown}.`,
    { outcome: 'unreachable', relay: ctx.relayUrl },
    true,
  );

/** One server's tools share one kit: its context, its key ledger, its wait and its relay guard. */
export interface ToolKit {
  ctx: ToolContext;
  ledger: KeyLedger;
  /** `wait_ms` as asked, else the default, never past the cap. */
  waitOf(ms: number | undefined): number;
  /** Runs `run` on the open relay connection; a relay that is down, full or refusing is a result. */
  withConsumer(run: (c: RelayConsumer) => Promise<ToolResult>): Promise<ToolResult>;
}

export function toolKit(ctx: ToolContext): ToolKit {
  const waitOf = (ms: number | undefined) => Math.min(ms ?? ctx.waitMs, ctx.maxWaitMs);
  const withConsumer = async (run: (c: RelayConsumer) => Promise<ToolResult>): Promise<ToolResult> => {
    const c = ctx.consumer();
    if (c === undefined) return unreachable(ctx);
    try {
      return await run(c);
    } catch (err) {
      if (err instanceof FrameError && err.code === CAPACITY) {
        return refusal(
          err.code,
          `the relay connection is at capacity (${err.message}); retry the same call in a moment (with the same idempotency_key, if you gave one).`,
          { retryable: true },
        );
      }
      if (err instanceof FrameError)
        return refusal(err.code, `the relay refused the request: ${err.message}.`, { retryable: false });
      return result(
        `Relay connection failed: ${(err as Error).message}. Try again; the server reconnects by itself.`,
        { outcome: 'unreachable', detail: (err as Error).message },
        true,
      );
    }
  };
  return { ctx, ledger: new KeyLedger(), waitOf, withConsumer };
}

/** Registers one tool (or a group that shares a schema) on the server. */
export type RegisterTool = (server: McpServer, kit: ToolKit) => void;
