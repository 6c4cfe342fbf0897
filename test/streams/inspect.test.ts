import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'ws';
import { createInspector } from '../../src/streams/inspect.js';
import { adapter } from '../support/adapter.js';
import { hookBody } from '../support/fake-surface.js';
import { instructCmd } from '../support/session-steps.js';

test('session actors report to the loopback inspector; instruction text stays out of it', async () => {
  const inspector = await createInspector({ port: 0 });
  const received: string[] = [];
  const client = new WebSocket(inspector.url);
  await new Promise<void>((resolve, reject) => {
    client.once('open', () => resolve());
    client.once('error', reject);
  });
  client.on('message', (m) => received.push(String(m)));
  const a = await adapter({ inspect: inspector.inspect });
  try {
    await a.post(hookBody('SessionStart', 's-1', { agent_id: 'x' }));
    a.handle.command(instructCmd('c1', 'very private steering text', 's-1'));
    // Wait until the inspector relays the queued snapshot (bounded, so a broken link fails).
    await new Promise<void>((resolve, reject) => {
      let tries = 0;
      const check = () => {
        if (received.some((m) => m.includes('"queued"'))) resolve();
        else if (++tries > 1000) reject(new Error('no queued snapshot reached the inspector'));
        else setTimeout(check, 10);
      };
      check();
    });
    const all = received.join('\n');
    assert.ok(all.includes('@xstate.actor'));
    assert.ok(all.includes('[26 chars]'));
    assert.not.ok(all.includes('very private steering text'));
  } finally {
    client.close();
    await a.handle.close();
    await inspector.stop();
  }
});

test.run();
