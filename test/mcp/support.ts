// Starts `aep-steer mcp` as its own process (the real bin, stdio) and connects the MCP SDK's
// client to it, the way an orchestrating agent's MCP host does.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { test } from 'uvu';
import { startTestStack, type TestStack } from '../cli/support.js';
import { projectRoot } from '../support/shared-dir.js';

export const BIN = join(projectRoot, 'bin', 'aep-steer.js');

interface ToolCall {
  isError: boolean;
  text: string;
  facts: Record<string, unknown>;
}

export interface McpClient {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<ToolCall>;
  stderr(): string;
  close(): Promise<void>;
}

export async function startMcp(args: string[], env: Record<string, string> = {}): Promise<McpClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...args],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'aep-steer-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(name, a) {
      const r = (await client.callTool({ name, arguments: a })) as {
        isError?: boolean;
        content: { type: string; text?: string }[];
        structuredContent?: Record<string, unknown>;
      };
      return {
        isError: r.isError === true,
        text: r.content.map((c) => c.text ?? '').join('\n'),
        facts: r.structuredContent ?? {},
      };
    },
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/**
 * A relay and Claude Code adapter (the CLI tests' stack) and `aep-steer mcp` on it, started
 * before the file's tests and ended after them; read the fields once the tests run.
 */
export function mcpOnStack(): { stack: TestStack; mcp: McpClient } {
  const on = {} as { stack: TestStack; mcp: McpClient };
  test.before(async () => {
    on.stack = await startTestStack();
    on.mcp = await startMcp(['--relay', on.stack.relayUrl, '--token', on.stack.token, '--wait-ms', '20000']);
  });
  test.after(async () => {
    await on.mcp?.close();
    await on.stack?.stop();
  });
  return on;
}
