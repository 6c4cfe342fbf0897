// The D45 spawn path under measure, in its own process: the loopback mock model, a relay, and the
// Codex adapter with `--spawn-root` (its hooks installed for the pinned CLI), with a consumer that
// spawns through the relay as `aep-steer spawn` does. A control port times one worker:
// `POST /spawn?tag=T` sends the spawn and answers `{first, end}`: ms from the spawn's send to the
// worker's first model request, and from the turn's last model request (the mock answers at once,
// with text that ends the turn) to `wait` returning `turn-ended`; the worker is stopped after.
// `POST /hand?tag=T` is the baseline: `codex exec` started by hand in the same folder and
// environment, timed the same way, its turn end read from its own `turn.completed` line.
// `GET /stats` reports this process's CPU time.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { adapterConfig, runAdapter } from '../../src/cli/adapter-command.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { sendSpawn } from '../../src/consumer/spawn.js';
import { sendStop } from '../../src/consumer/stop.js';
import { waitFor } from '../../src/consumer/turns.js';
import { startRelay } from '../../src/relay/server.js';
import { startMockOpenAi } from '../../test/support/mock-openai.js';
import {
  bodyHas,
  codexEnv,
  codexHome,
  vendorBinary,
  workspace,
  writeCodexConfig,
} from '../../test/support/vendor-e2e.js';
import { answer, serveUntilStopped } from '../lib/proc.js';

const TOKEN = 'bench-spawn-token';
const bin = vendorBinary('codex');
if (bin === undefined) throw new Error('the pinned Codex CLI is not installed (scripts/install-vendor-cli.sh codex)');
const mock = await startMockOpenAi();
const ws = workspace('aep-bench-spawn-');
writeCodexConfig(ws, mock.baseUrl);
const env: NodeJS.ProcessEnv = { ...codexEnv(ws), AEP_CODEX_BIN: bin, AEP_STATE_DIR: join(ws.root, 'state') };
const relay = await startRelay({ port: 0, storePath: ':memory:', token: TOKEN });
const cfg = adapterConfig(
  'codex',
  { port: '0', relay: relay.socketUrl, token: TOKEN, spawnRoot: ws.root, log: join(ws.root, 'codex.jsonl') },
  env,
);
const running = await runAdapter(cfg, () => undefined);
installCodex({
  user: true,
  port: running.adapter.port,
  secret: cfg.secret,
  neutral: codex.replies.neutral,
  attentionTimeoutMs: codex.attentionTimeoutMs,
  env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: bin, AEP_STATE_DIR: env.AEP_STATE_DIR! },
});
const consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKEN, agent: 'bench-spawn' });

/** When each model request was first seen (polled every 2 ms: far below the figures' seconds). */
const seenAt: number[] = [];
const poller = setInterval(() => {
  while (seenAt.length < mock.requests.length) seenAt.push(performance.now());
}, 2);
const tagged = (tag: string): number[] =>
  mock.requests.flatMap((r, i) => (bodyHas(r.body, tag) && seenAt[i] !== undefined ? [seenAt[i]!] : []));
async function firstRequest(tag: string): Promise<number> {
  for (;;) {
    const t = tagged(tag)[0];
    if (t !== undefined) return t;
    await new Promise((r) => setTimeout(r, 2));
  }
}
const prompt = (tag: string): string => `[[TURN]] [[TOOLS:0]] ${tag} say done`;

async function viaSpawn(tag: string): Promise<{ first: number; end: number }> {
  const t0 = performance.now();
  const sent = sendSpawn(
    consumer,
    { sender: 'bench-spawn' },
    { vendor: 'codex', cwd: ws.project, prompt: prompt(tag), timeoutMs: 90_000 },
  );
  const first = await firstRequest(tag);
  const o = await sent;
  if (o.outcome !== 'spawned') throw new Error(`spawn ${o.outcome}: ${JSON.stringify(o)}`);
  const w = await waitFor(consumer, { session: o.session, for: ['turn-end'], timeoutMs: 120_000 });
  const waited = performance.now();
  if (w.outcome !== 'turn-ended') throw new Error(`wait ${w.outcome}`);
  const end = waited - tagged(tag).at(-1)!;
  await sendStop(consumer, { sender: 'bench-spawn' }, { session: o.session, timeoutMs: 30_000 });
  return { first: first - t0, end };
}

async function byHand(tag: string): Promise<{ first: number; end: number }> {
  const t0 = performance.now();
  const args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt(tag)];
  const child = spawn(bin!, args, { cwd: ws.project, env, stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((r) => child.once('close', r));
  let completed: number | undefined;
  createInterface({ input: child.stdout! }).on('line', (l) => {
    if (completed === undefined && l.includes('"turn.completed"')) completed = performance.now();
  });
  const first = await firstRequest(tag);
  await exited;
  if (completed === undefined) throw new Error('codex exec reported no turn.completed');
  return { first: first - t0, end: completed - tagged(tag).at(-1)! };
}

const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bench');
  const tag = url.searchParams.get('tag') ?? 'b-0';
  const reply = (p: Promise<unknown>) =>
    p.then(
      (v) => res.end(JSON.stringify(v)),
      (err: Error) => {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: err.message }));
      },
    );
  if (url.pathname === '/spawn') return void reply(viaSpawn(tag));
  if (url.pathname === '/hand') return void reply(byHand(tag));
  if (url.pathname === '/stats') {
    const u = process.cpuUsage();
    return void res.end(JSON.stringify({ cpuMs: (u.user + u.system) / 1000 }));
  }
  res.statusCode = 404;
  res.end('{}');
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
answer({ url: `http://127.0.0.1:${(control.address() as AddressInfo).port}` });
serveUntilStopped(async () => {
  clearInterval(poller);
  control.close();
  await consumer.close();
  await running.close();
  await relay.close();
  await mock.close();
});
