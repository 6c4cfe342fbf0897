// The adapter under test in its own process. `{ surface: "claude-code" | "bench", fsync,
// relay?: { url, token } }`. Besides the hook endpoint it serves a control port for the bench:
// `POST /inject?session=S&n=N` hands N instructions to the session as the relay would
// (AdapterHandle.command), `GET /stats` reports the process's CPU time.
import { fdatasync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { surfaceFor } from '../../src/adapters/registry.js';
import { command } from '../../src/protocol/index.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor, startAdapter } from '../../src/streams/run.js';
import { answer, argOf, serveUntilStopped } from '../lib/proc.js';
import { benchSurface } from '../lib/surface.js';

interface Arg {
  surface: 'claude-code' | 'bench';
  fsync?: boolean;
  relay?: { url: string; token: string };
}
const arg = argOf<Arg>();

const surface = arg.surface === 'bench' ? benchSurface() : surfaceFor(arg.surface)!;
let syncs = 0;
const dir = mkdtempSync(join(tmpdir(), 'aep-bench-adapter-'));
const relay = arg.relay
  ? connectRelay({
      url: arg.relay.url,
      token: arg.relay.token,
      agent: surface.token,
      accepts: acceptsFor(surface, true),
    })
  : undefined;
const adapter = await startAdapter({
  surface,
  port: 0,
  secret: 'bench-secret-0123456789',
  logPath: join(dir, 'adapter.jsonl'),
  instruct: true,
  host: 'bench',
  fsync: arg.fsync ?? true,
  onError: () => undefined,
  ...(relay ? { relay } : {}),
  // Counted, and otherwise what the log does by default.
  logSync: (fd, done) => {
    syncs += 1;
    fdatasync(fd, done);
  },
});
if (relay) await relay.ready();

const sender = { agent: 'bench-sender', host: 'bench' };
const TEXT = 'keep the change small and run the unit tests before committing';
const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  req.resume();
  req.on('end', () => {
    if (url.pathname === '/inject') {
      const session = url.searchParams.get('session') ?? 'bench';
      const n = Number(url.searchParams.get('n') ?? 1);
      for (let i = 0; i < n; i += 1)
        adapter.command(
          command(sender, session, { type: surface.steeringType, data: { text: TEXT }, capture: 'redacted' }),
        );
      res.writeHead(200, { 'content-length': 2 }).end('{}');
    } else {
      const cpu = process.cpuUsage();
      // Logged steps: one `in` record each (one fsync each when every step synced alone). Counted
      // only when asked: reading the log would otherwise land in the CPU of the run it measures.
      const steps = url.searchParams.has('steps')
        ? readFileSync(join(dir, 'adapter.jsonl'), 'utf8')
            .split('\n')
            .filter((l) => l.startsWith('{"k":"in"')).length
        : undefined;
      const body = JSON.stringify({
        cpuMs: (cpu.user + cpu.system) / 1000,
        syncs,
        ...(steps === undefined ? {} : { steps }),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    }
  });
});
await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
const cport = (control.address() as AddressInfo).port;
answer({
  url: adapter.hookUrl,
  injectUrl: `http://127.0.0.1:${cport}/inject`,
  statsUrl: `http://127.0.0.1:${cport}/stats`,
  steeringType: surface.steeringType,
});
serveUntilStopped(async () => {
  await new Promise<void>((r) => control.close(() => r()));
  await adapter.close();
  rmSync(dir, { recursive: true, force: true });
});
