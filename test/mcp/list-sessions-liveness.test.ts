// MCP list_sessions shows what D37 adds: a session's working directory and title, and instruct to
// a session whose adapter is not connected is a tool error that says what to start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestStack } from '../cli/support.js';
import { startMcp } from './support.js';

test('list_sessions gives cwd and title; instruct to an offline session says to start its adapter', async () => {
  const stack = await startTestStack();
  const mcp = await startMcp(['--relay', stack.relayUrl, '--token', stack.token, '--wait-ms', '5000']);
  try {
    const s = await stack.openSession({ cwd: '/home/dev/api', prompt: 'Add rate limits\nto the login route' });
    await stack.waitFor(
      (e) => e.session === s.session && e.type === 'x.claude-code.session.described' && e.data?.['title'] !== undefined,
    );
    const end = Date.now() + 10_000;
    let row: Record<string, unknown> | undefined;
    while (Date.now() < end) {
      const r = await mcp.call('list_sessions', {});
      row = (r.facts['sessions'] as Record<string, unknown>[]).find(
        (x) => x['session'] === s.session && x['title'] !== undefined,
      );
      if (row) {
        assert.match(r.text, '"Add rate limits"');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(row, 'listed with its title');
    assert.is(row!['cwd'], '/home/dev/api');
    assert.is(row!['title'], 'Add rate limits');

    await stack.adapter.close();
    let offline = await mcp.call('instruct', { session: s.session, text: 'still there?' });
    for (const until = Date.now() + 5000; offline.facts['code'] !== 'adapter-offline' && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      offline = await mcp.call('instruct', { session: s.session, text: 'still there?' });
    }
    assert.ok(offline.isError);
    assert.is(offline.facts['code'], 'adapter-offline');
    assert.match(
      offline.text,
      'its adapter is not connected; nothing was sent; tell the person who runs that agent to start its adapter again',
    );
  } finally {
    await mcp.close();
    await stack.stop();
  }
});

test.run();
