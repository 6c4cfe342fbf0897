// What a steering tool returns: the consumer core's explained outcome as an MCP tool result, the
// sentence for the model first and the stream facts beside it.
import {
  explainRespond,
  explainSteer,
  refusal as refused,
  result as explained,
  type Explained,
} from '../consumer/explain.js';
import { MCP_VOICE } from '../consumer/next-step.js';

export interface ToolResult {
  [k: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The sentence also leads the structured content: some hosts (Claude Code 2.1.332) hand the
 * model only `structuredContent` when it is present, and the sentence is what says what to do.
 */
export const tool = (x: Explained): ToolResult => ({
  content: [{ type: 'text', text: x.text }],
  structuredContent: { message: x.text, ...x.facts },
  ...(x.isError ? { isError: true } : {}),
});
export const result = (text: string, facts: Record<string, unknown>, isError = false): ToolResult =>
  tool(explained(text, facts, isError));
export const refusal = (code: string, sentence: string, facts: Record<string, unknown> = {}): ToolResult =>
  tool(refused(code, sentence, facts));
export const steerResult = (
  o: Parameters<typeof explainSteer>[0],
  opts: { key?: string; waitMs: number; noun: string },
) => tool(explainSteer(o, { ...opts, voice: MCP_VOICE }));
export const respondResult = (o: Parameters<typeof explainRespond>[0]): ToolResult =>
  tool(explainRespond(o, MCP_VOICE));
