// The adapter under test in its own process. `{ surface: "claude-code" | "qwen-code" | "bench",
// fsync, relay?: { url, token }, serve?: URL, timed? }`. `serve` attaches the table's native lane
// to that daemon as `aep-steer adapter <vendor> --serve URL` does. Besides the hook endpoint it
// serves a control port for the bench: `POST /inject?session=S&n=N[&delivery=D]` hands N
// instructions to the session as the relay would (AdapterHandle.command) and answers their ids,
// `GET /stats` reports the process's CPU time. With `timed`, `GET /settled?id=ID` answers once
// that instruction is settled: `{outcome: "delivered", ms, lane, delivery}`, ms from its
// injection to its `instruction.delivered` (both read in this process), or how it was refused.
import { fdatasync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { surfaceFor, tableFor } from '../../src/adapters/registry.js';
import { command } from '../../src/protocol/index.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor, startAdapter } from '../../src/streams/run.js';
import { answer, argOf, serveUntilStopped } from '../lib/proc.js';
import { benchSurface } from '../lib/surface.js';

interface Arg {
  surface: 'claude-code' | 'qwen-code' | 'bench';
  fsync?: boolean;
  relay?: { url: string; token: string };
  serve?: string;
  timed?: boolean;
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
const laneSpec =
  arg.serve === undefined ? undefined : tableFor(surface.token)?.lanes?.find((l) => l.joins === 'attached');
if (arg.serve !== undefined && laneSpec?.joins !== 'attached') throw new Error(`${surface.token} has no serve lane`);
const lane =
  laneSpec?.joins === 'attached' ? await laneSpec.attach({ url: arg.serve!, onError: () => undefined }) : undefined;
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
  ...(lane ? { lanes: [lane] } : {}),
  // Counted, and otherwise what the log does by default.
  logSync: (fd, done) => {
    syncs += 1;
    fdatasync(fd, done);
  },
});
if (relay) await relay.ready();

const sender = { agent: 'bench-sender', host: 'bench' };
const TEXT = 'keep the change small and run the unit tests before committing';

type Settled = { outcome: string; ms?: number; lane?: unknown; delivery?: unknown; reason?: unknown; detail?: unknown };
/** Timed instructions: when each was injected, how it settled, who waits for that. */
const injectedAt = new Map<string, number>();
const settled = new Map<string, Settled>();
const waiting = new Map<string, (s: Settled) => void>();
const settle = (id: string, s: Settled) => {
  injectedAt.delete(id);
  const w = waiting.get(id);
  if (w === undefined) settled.set(id, s);
  else {
    waiting.delete(id);
    w(s);
  }
};
if (arg.timed === true)
  adapter.events$.subscribe((e) => {
    const id = e.cause;
    const t0 = id === undefined ? undefined : injectedAt.get(id);
    if (id === undefined || t0 === undefined) return;
    const d = (e.data ?? {}) as Record<string, unknown>;
    if (e.type.endsWith('.instruction.delivered'))
      settle(id, { outcome: 'delivered', ms: performance.now() - t0, lane: d.lane, delivery: d.delivery });
    else if (e.type.endsWith('.instruction.dropped') || e.type === 'control.rejected')
      settle(id, { outcome: e.type.split('.').pop()!, reason: d.reason, detail: d.detail });
  });
const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  req.resume();
  req.on('end', () => {
    if (url.pathname === '/inject') {
      const session = url.searchParams.get('session') ?? 'bench';
      const n = Number(url.searchParams.get('n') ?? 1);
      const delivery = url.searchParams.get('delivery');
      const ids: string[] = [];
      for (let i = 0; i < n; i += 1) {
        const c = command(sender, session, {
          type: surface.steeringType,
          data: delivery === null ? { text: TEXT } : { text: TEXT, delivery },
          capture: 'redacted',
        });
        ids.push(c.id);
        if (arg.timed === true) injectedAt.set(c.id, performance.now());
        adapter.command(c);
      }
      const body = JSON.stringify({ ids });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } else if (url.pathname === '/settled') {
      const id = url.searchParams.get('id') ?? '';
      const reply = (s: Settled) => {
        const body = JSON.stringify(s);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      };
      const done = settled.get(id);
      if (done !== undefined) {
        settled.delete(id);
        reply(done);
      } else if (!injectedAt.has(id)) reply({ outcome: 'unknown', detail: `no timed instruction ${id} waits` });
      else waiting.set(id, reply);
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
