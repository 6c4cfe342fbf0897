// Starts a relay (in-process, port 0, in-memory store) and optionally a control-capable target
// claiming a session: a small stub (`--session`), or one of this project's real adapters
// (`--adapter <vendor> --session S`: the vendor's runtime, claiming S through a SessionStart-like
// hook). Prints `{"url": …}` on stdout and runs until SIGTERM/SIGINT.
// Used by scripts/live-conformance.sh to run the AEP standard's live checker against this relay;
// with AEP_TEST_STORE=nats the relay is a NATS-backed node (its own nats-server).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { surfaceFor } from '../../src/adapters/registry.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor, startAdapter, type AdapterHandle } from '../../src/streams/run.js';
import { testRelay } from './relay-store.js';
import { startTestTarget } from './relay-target.js';

const { values } = parseArgs({
  options: { token: { type: 'string' }, buffer: { type: 'string' }, session: { type: 'string' }, run: { type: 'string' }, adapter: { type: 'string' } },
});
const relay = await testRelay({ port: 0, storePath: ':memory:', ...(values.token ? { token: values.token } : {}), ...(values.buffer ? { bufferCap: Number(values.buffer) } : {}) });
let target: Awaited<ReturnType<typeof startTestTarget>> | undefined;
let adapter: AdapterHandle | undefined;
if (values.adapter && values.session) {
  const surface = surfaceFor(values.adapter);
  if (!surface) throw new Error(`unknown vendor ${values.adapter}`);
  const secret = 'live-conformance-secret-0123';
  const link = connectRelay({ url: relay.socketUrl, agent: surface.token, accepts: acceptsFor(surface, true), ...(values.token ? { token: values.token } : {}) });
  adapter = await startAdapter({
    surface, port: 0, secret, instruct: true, relay: link, fsync: false,
    logPath: join(mkdtempSync(join(tmpdir(), 'aep-live-')), 'events.jsonl'),
  });
  // The session's first hook makes the adapter emit session.started, which claims it on the relay.
  await fetch(`${adapter.hookUrl}`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ session_id: values.session, hook_event_name: 'SessionStart', source: 'startup', cwd: '/tmp' }),
  });
} else if (values.session) {
  target = await startTestTarget({ url: relay.socketUrl, ...(values.token ? { token: values.token } : {}), accepts: ['control.attention.respond', 'control.cancel'], sessions: [values.session] });
  if (values.run) target.link.send(target.emitter(values.session).emit({ type: 'run.started', run: values.run, data: { trigger: 'user' } }));
}
process.stdout.write(`${JSON.stringify({ url: relay.url })}\n`);
const stop = async () => {
  await target?.close();
  await adapter?.close();
  await relay.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
