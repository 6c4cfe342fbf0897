// Starts a relay (in-process, port 0, in-memory store) and optionally a control-capable target
// claiming a session: a small stub (`--session`), or one of this project's real adapters
// (`--adapter <vendor> --session S`: the vendor's runtime, claiming S through its start hook).
// Prints `{"url": …, "run"?: …}` on stdout (the run its start moment opened, where it mints one)
// and runs until SIGTERM/SIGINT.
// Used by scripts/live-conformance.sh to run the AEP standard's live checker against this relay;
// with AEP_TEST_STORE=nats the relay is a NATS-backed node (its own nats-server).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { surfaceFor } from '../../src/adapters/registry.js';
import { connectEmitter } from './emitter-link.js';
import { acceptsFor, startAdapter, type AdapterHandle } from '../../src/streams/run.js';
import type { Lane } from '../../src/streams/lane.js';
import { EMPTY, filter, firstValueFrom } from 'rxjs';
import { testRelay } from './relay-store.js';
import { startTestTarget } from './relay-target.js';

const { values } = parseArgs({
  options: {
    token: { type: 'string' },
    buffer: { type: 'string' },
    session: { type: 'string' },
    run: { type: 'string' },
    adapter: { type: 'string' },
  },
});
const relay = await testRelay({
  port: 0,
  storePath: ':memory:',
  ...(values.token ? { token: values.token } : {}),
  ...(values.buffer ? { bufferCap: Number(values.buffer) } : {}),
});
let target: Awaited<ReturnType<typeof startTestTarget>> | undefined;
let adapter: AdapterHandle | undefined;
let runId: string | undefined;

/** The start hook (and, for a user-plane vendor, the abort answer) in each vendor's shape. */
const HOOK_BODIES: Record<
  string,
  { start: (s: string) => Record<string, unknown>; abort?: (s: string) => Record<string, unknown> }
> = {
  'claude-code': { start: (s) => ({ session_id: s, hook_event_name: 'SessionStart', source: 'startup', cwd: '/tmp' }) },
  cline: {
    start: (s) => ({
      hookName: 'agent_start',
      taskId: 'conv_live',
      sessionContext: { rootSessionId: s },
      agent_id: 'agent_live',
      parent_agent_id: null,
    }),
    abort: (s) => ({
      hookName: 'session_shutdown',
      taskId: 'conv_live',
      sessionContext: { rootSessionId: s },
      agent_id: 'agent_live',
      parent_agent_id: null,
    }),
  },
};
if (values.adapter && values.session) {
  const surface = surfaceFor(values.adapter);
  if (!surface) throw new Error(`unknown vendor ${values.adapter}`);
  const secret = 'live-conformance-secret-0123';
  const session = values.session;
  const hooks = HOOK_BODIES[values.adapter] ?? HOOK_BODIES['claude-code']!;
  // A user-plane vendor (Cline) gets a stand-in for its hub: it takes every input, and a cancel
  // is answered the way Cline 3.0.65 answers hub run.abort, with the SessionShutdown hook.
  const plane = surface.cancels === true;
  const post = (body: Record<string, unknown>) =>
    fetch(`${adapter!.hookUrl}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const channel: Lane = {
    name: 'channel',
    deliveries: [],
    how: 'connect the channel',
    reaches: () => true,
    facts$: EMPTY,
    close: async () => undefined,
    send: async () => ({ ok: true }),
    interrupt: async () => {
      setTimeout(() => {
        if (hooks.abort) void post(hooks.abort(session));
      }, 50);
      return { ok: true };
    },
  };
  const link = connectEmitter({
    url: relay.socketUrl,
    agent: surface.token,
    accepts: acceptsFor(surface, true, plane),
    ...(values.token ? { token: values.token } : {}),
  });
  adapter = await startAdapter({
    surface,
    port: 0,
    secret,
    instruct: true,
    relay: link,
    fsync: false,
    logPath: join(mkdtempSync(join(tmpdir(), 'aep-live-')), 'events.jsonl'),
    ...(plane ? { lanes: [channel], sendInput: true } : {}),
  });
  const started = firstValueFrom(adapter.events$.pipe(filter((e) => e.session === session)));
  // The session's first hook makes the adapter emit its first event, which claims it on the relay;
  // a vendor whose start moment opens a turn names the run it minted.
  await post(hooks.start(session));
  runId = (await started).run;
} else if (values.session) {
  target = await startTestTarget({
    url: relay.socketUrl,
    ...(values.token ? { token: values.token } : {}),
    accepts: ['control.attention.respond', 'control.cancel'],
    sessions: [values.session],
  });
  if (values.run)
    target.link.send(
      target.emitter(values.session).emit({ type: 'run.started', run: values.run, data: { trigger: 'user' } }),
    );
}
process.stdout.write(`${JSON.stringify({ url: relay.url, ...(runId === undefined ? {} : { run: runId }) })}\n`);
const stop = async () => {
  await target?.close();
  await adapter?.close();
  await relay.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
