// The adapter process's account of its relay: connected, lost, reconnected, with the sessions it
// owns back on the roster as soon as the relay returns (the link retries at least every second).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterConfig, runAdapter } from '../../src/cli/adapter-command.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { DEFAULT_BACKOFF_MAX_MS } from '../../src/relay/ws-connection.js';
import { scriptedSession } from '../../src/demo/scripted-session.js';

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never saw ${what}`);
}

test("relay connected, lost, reconnected; the session is on the new relay's roster again", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-relay-status-'));
  const store = join(dir, 'relay.db');
  let relay: RelayHandle = await startRelay({ port: 0, storePath: store, token: 'st' });
  const port = relay.port;
  const lines: string[] = [];
  const cfg = adapterConfig(
    'claude-code',
    { port: '0', relay: relay.socketUrl, token: 'st', instruct: true, log: join(dir, 'a.jsonl') },
    { AEP_STATE_DIR: dir },
  );
  const running = await runAdapter(
    cfg,
    () => {},
    (l) => lines.push(l),
  );
  try {
    await until(() => (lines.length > 0 ? true : undefined), 'a first line');
    assert.equal(lines, [`aep-steer adapter: relay connected: ${relay.socketUrl}`]);
    const s = scriptedSession();
    for (const h of s.opening) {
      await fetch(`${running.adapter.hookUrl}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(h),
      });
    }
    const onRoster = async (r: RelayHandle) => {
      const c = await RelayConsumer.connect({ url: r.socketUrl, token: 'st', agent: 't' });
      try {
        return (await c.roster()).some((e) => e.session === s.session) ? true : undefined;
      } finally {
        await c.close();
      }
    };
    await until(() => onRoster(relay), 'the session claimed');
    await relay.close();
    await until(() => (lines.length > 1 ? true : undefined), 'the loss reported');
    assert.match(lines[1]!, `aep-steer adapter: relay lost: ${relay.socketUrl}; reconnecting every second`);
    relay = await startRelay({ port, storePath: store, token: 'st' });
    await until(() => (lines.length > 2 ? true : undefined), 'the return reported');
    assert.is(lines[2], `aep-steer adapter: relay reconnected: ${relay.socketUrl}; its sessions are claimed again`);
    assert.ok(await until(() => onRoster(relay), 'the session claimed again'));
    assert.is(DEFAULT_BACKOFF_MAX_MS, 1000, 'never more than a second between attempts');
  } finally {
    await running.close();
    await relay.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
