// Load generator for command round trips through a relay: a consumer sends `n` instructs one at
// a time and times each until the target's `control.accepted` for it arrives. The target is this
// process's own acking socket (`target: "self"`), or an adapter that already claimed the session
// (`target: "external"`). With `background`, an emitter streams events of another session all
// along, so the store writes while commands run. Answers `{ ms: number[] }`.
import { openSync, writeSync, fdatasyncSync, closeSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command, SessionEmitter } from '../../src/protocol/build.js';
import { answer, argOf } from '../lib/proc.js';
import { agent, post } from './http.js';
import { close, connect, subscribe, type Conn } from './ws.js';

interface Arg {
  url: string;
  /** The target's relay node when it is not `url` (a command crossing nodes). */
  targetUrl?: string;
  token: string;
  n: number;
  warmup: number;
  target: 'self' | 'external';
  type: string;
  session: string;
  background?: boolean;
  fsyncs?: number;
  bare?: boolean;
  drain?: { url: string; body: string; every: number };
}
const arg = argOf<Arg>();
const conns: Conn[] = [];
let background: (() => void) | undefined;

if (arg.target === 'self') {
  const target = await connect(arg.targetUrl ?? arg.url, arg.token, {
    role: 'both',
    identity: { agent: 'bench-target' },
    capabilities: { control: { accepts: [arg.type] } },
  });
  conns.push(target);
  const em = new SessionEmitter({ agent: 'bench-target', session: arg.session, host: 'bench-host' });
  target.ws.on('message', (data) => {
    const text = data.toString();
    if (!text.includes('.control.')) return;
    const m = JSON.parse(text) as { type: string; id: string };
    if (m.type === arg.type) target.ws.send(JSON.stringify(em.emit({ type: 'control.accepted', cause: m.id })));
  });
  // session.started claims the session for this socket (D17); a bare broadcaster routes
  // nothing, so there the target subscribes to hear the commands.
  if (arg.bare) await subscribe(target, 'commands', { session: arg.session });
  target.ws.send(JSON.stringify(em.emit({ type: 'session.started' })));
}
const consumer = await connect(arg.url, arg.token, { role: 'consumer', identity: { agent: 'bench-cli' } });
conns.push(consumer);
await subscribe(consumer, 'acks', { session: arg.session, type: ['control.accepted', 'control.rejected'] });
// Commands route only once the relay knows the session's claimant (D17): wait for the roster.
if (!arg.bare) {
  for (let i = 0; ; i += 1) {
    const listed = consumer.waitFor((m) => (m.type === 'roster' || m.type === 'error') && m.id === `r${i}`);
    consumer.ws.send(JSON.stringify({ type: 'roster', id: `r${i}` }));
    // A relay that never answers a roster request would hold the load until its caller's limit.
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${arg.url} did not answer a roster request within 5 s; the load needs one that does`)),
        5000,
      );
    });
    const r = (await Promise.race([listed, silent]).finally(() => clearTimeout(timer))) as {
      type: string;
      entries?: { session?: string }[];
    };
    if (r.type === 'error') throw new Error(`${arg.url} refused a roster request: ${JSON.stringify(r)}`);
    if (r.entries?.some((e) => e.session === arg.session)) break;
    if (i > 200) throw new Error(`session ${arg.session} never appeared in the roster`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

if (arg.background) {
  const bg = await connect(arg.url, arg.token, { role: 'emitter', identity: { agent: 'bench-bg' } });
  conns.push(bg);
  const em = new SessionEmitter({ agent: 'bench-bg', session: `${arg.session}-bg`, host: 'bench-host' });
  let on = true;
  // A steady stream, 10 events a tick (about 9,000 a second, below what either relay sustains): the store always has writes to make while commands run.
  const pump = () => {
    if (!on) return;
    for (let i = 0; i < 10; i += 1)
      bg.ws.send(
        JSON.stringify(em.emit({ type: 'progress.status', severity: 'notice', data: { phase: 'bg', percent: i } })),
      );
    setTimeout(pump, 1);
  };
  pump();
  background = () => (on = false);
}

const sender = { agent: 'bench-cli', host: 'bench-host' };
const ms: number[] = [];
for (let i = 0; i < arg.warmup + arg.n; i += 1) {
  const cmd = command(sender, arg.session, { type: arg.type, capture: 'redacted', data: { text: `instruction ${i}` } });
  // A real adapter queues what it accepts; an untimed eligible hook now and then delivers the
  // queue, so it never fills up (queue-full would be a different path).
  if (arg.drain && i > 0 && i % arg.drain.every === 0) await post(arg.drain.url, arg.drain.body);
  const acked = consumer.waitFor(
    (m) => (m.type === 'control.accepted' || m.type === 'control.rejected') && m.cause === cmd.id,
  );
  const refused = consumer.waitFor((m) => m.type === 'error' && m.cause === cmd.id);
  const t0 = performance.now();
  consumer.ws.send(JSON.stringify(cmd));
  const stall = setTimeout(() => {
    process.stderr.write(`ws-command: no answer to command ${i} after 10 s\n`);
    process.exit(1);
  }, 10_000);
  const r = await Promise.race([acked, refused]);
  clearTimeout(stall);
  if (r.type !== 'control.accepted') throw new Error(`command not accepted: ${JSON.stringify(r)}`);
  if (i >= arg.warmup) ms.push(performance.now() - t0);
}
background?.();

// One small append made durable the way the adapter's log does it (fdatasync), the floor an ack
// waits for (D4), timed here too.
const fsyncMs: number[] = [];
if (arg.fsyncs) {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-fsync-'));
  const fd = openSync(join(dir, 'f'), 'w');
  const line = Buffer.from(`${JSON.stringify({ k: 'ev', e: { id: 'x'.repeat(26), type: 'control.accepted' } })}\n`);
  for (let i = 0; i < arg.fsyncs; i += 1) {
    const t0 = performance.now();
    writeSync(fd, line);
    fdatasyncSync(fd);
    fsyncMs.push(performance.now() - t0);
  }
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
}
await Promise.all(conns.map(close));
agent.destroy();
answer({ ms, fsyncMs });
