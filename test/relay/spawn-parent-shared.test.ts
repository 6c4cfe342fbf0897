// D45 under the one-user shared token: `aep-steer mcp` runs beside its orchestrator and claims no
// session, so it names its orchestrator's session itself. The relay takes the name for a session
// claimed now under the same token (the one user's own) and forwards the spawn with it; a session
// nobody claims, or the home, is refused `unauthorized` and nothing reaches the adapter.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import { SPAWN_PARENT_ATTR } from '../../src/protocol/types.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { emitterFor, freshSession, WsPeer } from '../support/relay-harness.js';

const HOME = 'aep-home-claude-code-test-host';
const SPAWN = 'x.claude-code.control.spawn';
const TOKEN = 'one-user-token';
let relay: RelayHandle;
let adapter: WsPeer;

test.before(async () => {
  relay = await startRelay({ port: 0, storePath: ':memory:', token: TOKEN });
  adapter = await WsPeer.target(relay.socketUrl, 'claude-code', [SPAWN], TOKEN);
});

test.after(async () => {
  adapter.close();
  await relay.close();
});

/** The adapter claims `session`: done once a watcher is served its event. */
async function claim(session: string): Promise<void> {
  const watch = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  watch.send({ type: 'subscribe', id: 'w', filter: { session } });
  await watch.next((f) => f.type === 'subscribed');
  adapter.send(emitterFor(session, 'claude-code').emit({ type: 'session.started' }));
  await watch.next((f) => f.type === 'session.started' && f.session === session);
  watch.close();
}

test("an MCP server names its orchestrator's session: forwarded with it; an unclaimed one or the home is refused", async () => {
  await claim(HOME);
  const lead = freshSession('lead');
  await claim(lead);
  const mcp = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  const spawn = (parent: unknown) => ({
    ...command({ agent: 'aep-steer-mcp', host: 'h' }, HOME, { type: SPAWN, data: { prompt: 'go', cwd: '/w' } }),
    [SPAWN_PARENT_ATTR]: parent,
  });
  const ok = spawn(lead);
  mcp.send(ok);
  assert.is((await adapter.next((f) => f.id === ok.id))[SPAWN_PARENT_ATTR], lead);
  for (const bad of ['nobody-claims-this', HOME]) {
    const cmd = spawn(bad);
    mcp.send(cmd);
    const err = await mcp.next((f) => f.type === 'error' && f.cause === cmd.id);
    assert.is(err.code, 'unauthorized', bad);
    assert.is(
      adapter.frames.find((f) => f.json?.id === cmd.id),
      undefined,
      `${bad}: nothing forwarded`,
    );
  }
  mcp.close();
});

test.run();
