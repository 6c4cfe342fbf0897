// D45 through `aep-steer mcp` as an orchestrator goes on after `spawn`: the spawned session is
// described with its spawner (the MCP server's sender and the spawn command), `wait` sees its
// turn end, and `read` answers for it. Shared by the vendors' spawn-through-MCP e2e files.
import * as assert from 'uvu/assert';
import type { McpClient } from '../mcp/support.js';
import type { VendorStack } from './vendor-e2e.js';

type Called = Awaited<ReturnType<McpClient['call']>>;

/** After a spawn's answer: its session, described with that spawn; waited for; read (the read's answer). */
export async function waitAndRead(mcp: McpClient, stack: VendorStack, spawned: Called): Promise<Called> {
  const session = spawned.facts['session'] as string;
  const described = await stack.waitFor('the worker described with spawned_by', () =>
    stack.events.find((e) => e.session === session && e.data?.['spawned_by'] !== undefined),
  );
  const by = described.data?.['spawned_by'] as { command?: string } | undefined;
  assert.is(by?.command, spawned.facts['command']);
  const waited = await mcp.call('wait', { session, for: ['turn-end'] });
  assert.not.ok(waited.isError, waited.text);
  assert.is(waited.facts['outcome'], 'turn-ended', waited.text);
  const read = await mcp.call('read', { session });
  assert.not.ok(read.isError, read.text);
  return read;
}
