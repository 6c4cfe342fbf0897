// Fault suite (D11, D12, D22–D24): a real relay process and a real Claude Code adapter process;
// a driver posting hooks for 50 sessions; a sender sending 500 instructions and retrying on the
// same command id; kill -9 of the adapter (>= 15) and of the relay (>= 3) at random points; a
// disk-full phase on the adapter's log (a small tmpfs where one can be mounted, else ENOSPC
// injected at the log's write call). Then: nothing delivered twice, nothing lost (every accepted
// instruction delivered or dropped with a reason, seen by the sender on the stream), every
// retried command re-acked byte for byte, no ack the log does not hold, audits clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { command } from '../../src/protocol/build.js';
import { fill, mountTmpfs } from '../support/full-disk.js';
import type { AepEvent } from '../../src/protocol/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'aep-steer.js');
// The adapter runs from the test entry: the same command, with the full-disk seam (D22).
const ADAPTER_ENTRY = ['--import', 'tsx', join(ROOT, 'test', 'support', 'adapter-cli-entry.ts')];
const TOKEN = 'fault-token-0123456789';
const SECRET = 'fault-secret-0123456789';
const SESSIONS = 50;
const INSTRUCTIONS = 500;
const ADAPTER_KILLS = 16;
const RELAY_KILLS = 4;
const rand = (a: number, b: number) => a + Math.floor(Math.random() * (b - a + 1));
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

class Proc {
  child: ChildProcess | undefined;
  starts = 0;
  kills = 0;
  stderr = '';
  /** Whether the process ever reported a refused log write (D22). */
  refusedWrites = false;
  constructor(
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly healthUrl: string,
    private readonly entry: string[] = [BIN],
  ) {}
  async start(): Promise<void> {
    this.starts += 1;
    const child = spawn(process.execPath, [...this.entry, ...this.args], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-20_000);
      if (d.toString().includes('LOG_WRITE_FAILED')) this.refusedWrites = true;
    });
    this.child = child;
    for (let i = 0; i < 400; i += 1) {
      try {
        const r = await fetch(this.healthUrl, { signal: AbortSignal.timeout(500) });
        if (r.ok) return;
      } catch {
        // not yet
      }
      if (child.exitCode !== null) throw new Error(`process exited ${child.exitCode}: ${this.stderr.slice(-2000)}`);
      await wait(25);
    }
    throw new Error(`not healthy: ${this.stderr.slice(-2000)}`);
  }
  kill9(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null) return Promise.resolve();
    this.kills += 1;
    return new Promise((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }
  async stop(): Promise<void> {
    const c = this.child;
    this.child = undefined;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => c.kill('SIGKILL'), 5000);
      c.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      c.kill('SIGTERM');
    });
  }
}

/** The sender: one consumer socket, reconnecting, replay-all + live, every frame kept raw. */
class Sender {
  ws: WebSocket | undefined;
  readonly events = new Map<string, string>();
  readonly ackTexts = new Map<string, string[]>();
  readonly outcomes = new Map<string, AepEvent[]>();
  readonly refusals = new Map<string, string[]>();
  closed = false;
  constructor(private readonly url: string) {}
  connect(): void {
    if (this.closed) return;
    const ws = new WebSocket(this.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    this.ws = ws;
    let greeted = false;
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          type: 'hello',
          versions: ['0.1'],
          role: 'consumer',
          identity: { agent: 'fault-sender' },
          capabilities: {},
        }),
      ),
    );
    ws.on('message', (data) => {
      const text = data.toString();
      const m = JSON.parse(text) as Record<string, unknown>;
      if (!greeted && m.type === 'hello') {
        greeted = true;
        ws.send(JSON.stringify({ type: 'subscribe', id: 'all', filter: {}, from: 'all' }));
        return;
      }
      if (m.type === 'error' && typeof m.cause === 'string') {
        const list = this.refusals.get(m.cause) ?? [];
        list.push(String(m.code));
        this.refusals.set(m.cause, list);
        return;
      }
      if (typeof m.type !== 'string' || !m.type.includes('.')) return;
      const e = m as unknown as AepEvent;
      if (e.type === 'control.accepted' || e.type === 'control.rejected') {
        const list = this.ackTexts.get(e.cause!) ?? [];
        list.push(text);
        this.ackTexts.set(e.cause!, list);
      }
      if (!this.events.has(e.id)) {
        this.events.set(e.id, text);
        if (/\.instruction\.(delivered|dropped)$/.test(e.type) && e.cause) {
          const list = this.outcomes.get(e.cause) ?? [];
          list.push(e);
          this.outcomes.set(e.cause, list);
        }
      }
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      if (this.ws === ws && !this.closed) setTimeout(() => this.connect(), 100);
    });
  }
  send(frame: string): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(frame);
    return true;
  }
  close(): void {
    this.closed = true;
    this.ws?.terminate();
  }
}

/** Everything the relay stores, as its replay serves it (the relay's export). */
async function relayExport(url: string): Promise<string[]> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          type: 'hello',
          versions: ['0.1'],
          role: 'consumer',
          identity: { agent: 'exporter' },
          capabilities: {},
        }),
      ),
    );
    ws.on('message', (data) => {
      const text = data.toString();
      const m = JSON.parse(text) as Record<string, unknown>;
      if (m.type === 'hello') {
        ws.send(JSON.stringify({ type: 'subscribe', id: 'x', filter: {}, from: 'all' }));
        ws.send(JSON.stringify({ type: 'unsubscribe', id: 'x' }));
      } else if (m.type === 'unsubscribed') resolve();
      else if (typeof m.type === 'string' && m.type.includes('.')) lines.push(text);
    });
  });
  ws.terminate();
  return lines;
}

test('kill -9, relay restarts and a full disk: nothing delivered twice, nothing lost, acks byte-identical and logged, audits clean', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-faults-'));
  const disk = join(dir, 'disk');
  const tmpfs = mountTmpfs(disk, '48m');
  const flag = join(dir, 'disk-full');
  const logPath = join(disk, 'logs', 'claude-code.jsonl');
  const relayPort = await freePort();
  const hookPort = await freePort();
  const relayUrl = `ws://127.0.0.1:${relayPort}/socket`;
  const relay = new Proc(
    ['relay', '--port', String(relayPort), '--token', TOKEN, '--store', join(dir, 'relay.db')],
    { AEP_STATE_DIR: join(dir, 'relay-state') },
    `http://127.0.0.1:${relayPort}/healthz`,
  );
  const adapter = new Proc(
    [
      'adapter',
      'claude-code',
      '--port',
      String(hookPort),
      '--secret',
      SECRET,
      '--log',
      logPath,
      '--relay',
      relayUrl,
      '--token',
      TOKEN,
      '--instruct',
      '--instruct-ttl-ms',
      '0',
      '--log-segment-bytes',
      String(256 * 1024),
      '--log-keep-segments',
      'all',
    ],
    { AEP_STATE_DIR: join(dir, 'adapter-state'), ...(tmpfs ? {} : { AEP_TEST_LOG_FULL_FLAG: flag }) },
    `http://127.0.0.1:${hookPort}/healthz`,
    ADAPTER_ENTRY,
  );
  const hookUrl = `http://127.0.0.1:${hookPort}/hook/${SECRET}`;
  const sender = new Sender(relayUrl);
  const seenInReplies = new Map<string, number>();
  const sessions = Array.from({ length: SESSIONS }, (_, i) => `fault-${i}-${Math.random().toString(36).slice(2, 8)}`);
  const common = (s: string) => ({ session_id: s, transcript_path: join(dir, `${s}.jsonl`), cwd: dir });
  let driving = true;
  let hooks = 0;

  async function post(body: Record<string, unknown>): Promise<string> {
    try {
      const r = await fetch(hookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(4000),
      });
      const j = (await r.json()) as { hookSpecificOutput?: { additionalContext?: string } };
      hooks += 1;
      return j.hookSpecificOutput?.additionalContext ?? '';
    } catch {
      return ''; // the shim fails open: a down adapter is a neutral reply
    }
  }
  function count(context: string): void {
    for (const m of context.matchAll(/\[fault-instruction (\d+)\]/g))
      seenInReplies.set(m[1]!, (seenInReplies.get(m[1]!) ?? 0) + 1);
  }
  async function driver(): Promise<void> {
    while (driving) {
      const s = sessions[rand(0, SESSIONS - 1)]!;
      const body =
        Math.random() < 0.5
          ? { ...common(s), hook_event_name: 'UserPromptSubmit', prompt: 'go on' }
          : {
              ...common(s),
              hook_event_name: 'PostToolUse',
              tool_name: 'Bash',
              tool_input: { command: 'ls' },
              tool_response: { stdout: 'a\nb' },
            };
      count(await post(body));
      await wait(rand(2, 15));
    }
  }

  const commands: { id: string; frame: string; session: string; retries: number; extra: boolean }[] = [];
  async function sendOne(i: number): Promise<void> {
    const session = sessions[i % SESSIONS]!;
    const cmd = command({ agent: 'fault-sender', host: 'faults' }, session, {
      type: 'x.claude-code.control.instruct',
      capture: 'redacted',
      data: { text: `[fault-instruction ${i}] please keep going` },
    });
    const c = { id: cmd.id, frame: JSON.stringify(cmd), session, retries: 0, extra: false };
    commands.push(c);
    const end = Date.now() + 120_000;
    for (;;) {
      if (sender.send(c.frame)) {
        const t = Date.now() + rand(600, 1500);
        while (Date.now() < t && !sender.ackTexts.has(c.id)) await wait(20);
      } else await wait(100);
      if (sender.ackTexts.has(c.id)) break;
      if (Date.now() > end) throw new Error(`command ${i} never acknowledged`);
      c.retries += 1;
    }
    // A third of the commands are retried again after their ack, some of them across restarts.
    if (Math.random() < 0.35) {
      c.extra = true;
      await wait(rand(50, 4000));
      while (!sender.send(c.frame)) await wait(100);
      c.retries += 1;
    }
  }

  try {
    await relay.start();
    await adapter.start();
    sender.connect();
    for (const s of sessions) await post({ ...common(s), hook_event_name: 'SessionStart', source: 'startup' });
    const drivers = Array.from({ length: 4 }, () => driver());
    // Chaos: adapter kills all through, relay kills and one disk-full phase among them.
    let chaosDone = false;
    const chaos = (async () => {
      const rounds = ADAPTER_KILLS + RELAY_KILLS;
      const fullAt = rand(4, rounds - 4);
      const relayAt = new Set<number>();
      while (relayAt.size < RELAY_KILLS) {
        const k = rand(1, rounds - 1);
        if (k !== fullAt) relayAt.add(k);
      }
      for (let k = 0; k < rounds; k += 1) {
        await wait(rand(300, 1800));
        if (k === fullAt) {
          if (tmpfs) fill(disk);
          else writeFileSync(flag, '');
          await wait(rand(800, 1500));
          // A restart while the disk is still full: nothing accepted is lost, nothing acked twice.
          await adapter.kill9();
          await wait(rand(50, 300));
          await adapter.start();
          await wait(rand(800, 1500));
          if (tmpfs) rmSync(join(disk, 'filler'), { force: true });
          else rmSync(flag, { force: true });
          continue;
        }
        if (relayAt.has(k)) {
          await relay.kill9();
          await wait(rand(100, 800));
          await relay.start();
          continue;
        }
        await adapter.kill9();
        await wait(rand(20, 400));
        await adapter.start();
      }
      chaosDone = true;
    })();
    const senders = Array.from({ length: 10 }, async (_, w) => {
      for (let i = w; i < INSTRUCTIONS; i += 10) {
        await sendOne(i);
        await wait(rand(20, 200));
      }
    });
    await Promise.all([...senders, chaos]);
    assert.ok(chaosDone);

    // Quiet: hooks go on until every accepted instruction has an outcome on the sender's stream.
    const accepted = () =>
      commands.filter((c) => sender.ackTexts.get(c.id)?.some((t) => t.includes('"control.accepted"')));
    const open = () => accepted().filter((c) => !sender.outcomes.has(c.id));
    for (let i = 0; i < 300 && open().length > 0; i += 1) await wait(100);
    // The rest drop at each session's end (D10).
    driving = false;
    await Promise.all(drivers);
    for (const s of sessions) await post({ ...common(s), hook_event_name: 'SessionEnd', reason: 'other' });
    for (let i = 0; i < 300 && open().length > 0; i += 1) await wait(100);

    // ---- the verdicts ----
    assert.ok(adapter.kills >= 15, `adapter killed ${adapter.kills} times`);
    assert.ok(relay.kills >= 3, `relay killed ${relay.kills} times`);
    assert.ok(hooks > 1000, `hooks posted: ${hooks}`);
    assert.ok(adapter.refusedWrites, 'the full disk refused log writes');
    const health = [...sender.events.values()]
      .filter((t) => t.includes('"type":"agent.health"'))
      .map((t) => (JSON.parse(t) as AepEvent<string, { status: string }>).data!.status);
    assert.ok(health.includes('degraded'), `the sender saw the adapter degraded (${health.join(', ')})`);
    const acceptedNow = accepted();
    assert.ok(acceptedNow.length >= INSTRUCTIONS - 5, `accepted ${acceptedNow.length} of ${INSTRUCTIONS}`);
    const twice = [...seenInReplies].filter(([, n]) => n > 1);
    assert.equal(twice, [], 'no instruction reached the agent twice');
    const multi = [...sender.outcomes]
      .filter(([, list]) => list.length > 1)
      .map(([id, list]) => `${id}: ${list.map((e) => e.type).join(',')}`);
    assert.equal(multi, [], 'one outcome per instruction');
    assert.equal(
      open().map((c) => c.id),
      [],
      'every accepted instruction ended delivered or dropped, seen by the sender',
    );
    for (const [, list] of sender.outcomes) {
      const e = list[0]!;
      if (e.type.endsWith('.dropped'))
        assert.ok(typeof (e.data as { reason?: unknown }).reason === 'string', 'a drop names its reason');
    }
    const delivered = [...sender.outcomes.values()].filter((l) => l[0]!.type.endsWith('.delivered')).length;
    assert.ok(delivered > INSTRUCTIONS / 2, `delivered ${delivered}`);
    const retried = commands.filter((c) => c.retries > 0);
    assert.ok(retried.length > 100, `retried commands: ${retried.length}`);
    for (const c of commands) {
      const texts = sender.ackTexts.get(c.id) ?? [];
      assert.ok(
        texts.every((t) => t === texts[0]),
        `every ack of ${c.id} is byte-identical (${new Set(texts).size} variants)`,
      );
    }
    const reacked = commands.filter((c) => c.extra && (sender.ackTexts.get(c.id)?.length ?? 0) > 1).length;
    assert.ok(reacked > 50, `commands re-acked after a retry: ${reacked}`);

    // No ack the log does not hold: the adapter's whole history, segments in order.
    await adapter.stop();
    const logDir = join(disk, 'logs');
    const segments = readdirSync(logDir)
      .filter((f) => /\.jsonl\.seg-\d+$/.test(f))
      .sort();
    const history = [
      ...segments.map((f) => readFileSync(join(logDir, f), 'utf8')),
      existsSync(logPath) ? readFileSync(logPath, 'utf8') : '',
    ].join('');
    assert.ok(segments.length >= 2, `the log rotated (${segments.length} archived segments)`);
    const logged = new Set<string>();
    for (const line of history.split('\n')) {
      if (!line.startsWith('{"k":"ev"')) continue;
      try {
        logged.add(JSON.stringify((JSON.parse(line) as { e: unknown }).e));
      } catch {
        // a torn tail from a kill: the audit reports it
      }
    }
    for (const [cause, texts] of sender.ackTexts)
      assert.ok(logged.has(JSON.stringify(JSON.parse(texts[0]!))), `the ack of ${cause} is in the log`);

    const exportPath = join(dir, 'adapter-export.jsonl');
    writeFileSync(
      exportPath,
      history
        .split('\n')
        .filter((l) => l.startsWith('{"k":"ev"') || l.startsWith('{"k":"in"') || l.startsWith('{"k":"flight"'))
        .map((l) => `${l}\n`)
        .join(''),
    );
    const relayLines = await relayExport(relayUrl);
    const relayPath = join(dir, 'relay-export.jsonl');
    writeFileSync(relayPath, relayLines.map((l) => `${l}\n`).join(''));
    for (const file of [exportPath, relayPath]) {
      const audit = spawnSync(process.execPath, [BIN, 'audit', file], { encoding: 'utf8' });
      assert.is(
        audit.status,
        0,
        `aep-steer audit ${file}:\n${audit.stdout.slice(-4000)}\n${audit.stderr.slice(-2000)}`,
      );
    }
    process.stdout.write(
      `faults: ${adapter.kills} adapter kills, ${relay.kills} relay kills, disk full via ${tmpfs ? 'tmpfs' : 'injected ENOSPC'}, ${hooks} hooks, ${acceptedNow.length} accepted, ${delivered} delivered, ${retried.length} retried, ${segments.length} segments\n`,
    );
  } finally {
    driving = false;
    sender.close();
    await adapter.stop();
    await relay.stop();
    if (tmpfs) spawnSync('umount', [disk], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
