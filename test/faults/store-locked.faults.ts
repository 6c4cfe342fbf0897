// D38 on the SQLite store: a real relay process whose store file another process holds the write
// lock of (an open write transaction, as a `sqlite3` shell or a backup tool would). Asserted
// while it holds it: every socket event, HTTP event and command is refused `store-unavailable`
// with the reason within 2 s (not SQLite's busy wait, not an HTTP 500), no command reaches its
// target but the first, handed on while its write waited and so told `outcome: unknown` (D41),
// `/healthz` answers 503 with the reason, the relay lives. After the other process commits and
// exits: `/healthz` 200, the first command sent again is handed on once more, and the history
// holds it once and no other refused command.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command } from '../../src/protocol/build.js';
import { startRelayNode, type RelayNode } from '../support/relay-node.js';
import { emitterFor, freshSession, post, WsPeer } from '../support/relay-harness.js';

const TOKEN = 'locked-store-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const REFUSAL_MS = 2000;
const TYPE = 'x.test-target.control.instruct';

const dir = mkdtempSync(join(tmpdir(), 'aep-locked-store-'));
let relay: RelayNode | undefined;
let holder: ChildProcess | undefined;
test.after(async () => {
  holder?.kill('SIGKILL');
  await relay?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A second process that opens the store file, begins a write transaction, writes, and holds it
 * until told `commit` on its stdin; resolves once it holds the lock.
 */
function holdWriteLock(db: string): Promise<ChildProcess> {
  const script = `
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    db.exec("INSERT OR REPLACE INTO write_probe (k, at) VALUES (1, 0)");
    process.stdout.write('locked\\n');
    process.stdin.on('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
  `;
  const p = spawn(process.execPath, ['-e', script, db], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    p.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('locked')) resolve(p);
    });
    p.once('exit', (code) => reject(new Error(`the lock holder exited ${code} before taking the lock`)));
  });
}

const health = async () => {
  const r = await fetch(`${relay!.url}/healthz`, { headers: auth });
  return { status: r.status, body: (await r.json()) as { ok: boolean; reason?: string } };
};

test('a store file another process holds the write lock of: store-unavailable within 2 s, nothing forwarded, healthz 503, then recovery', async () => {
  const db = join(dir, 'relay.db');
  relay = await startRelayNode(['--token', TOKEN, '--store', db]);
  const session = freshSession('locked');
  const em = emitterFor(session, 'test-agent');
  const target = await WsPeer.target(relay.socketUrl, 'test-agent', [TYPE], TOKEN);
  const sender = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  const instruct = (text: string) =>
    command({ agent: 'test-cli', host: 'h' }, session, { type: TYPE, capture: 'redacted', data: { text } });
  const delivered = (id: string) => target.frames.filter((f) => f.json?.id === id).length;

  sender.send({ type: 'subscribe', id: 'w', filter: { session } });
  await sender.next((f) => f.type === 'subscribed');
  const started = em.emit({ type: 'session.started' });
  target.send(started);
  // The session is claimed once its first event went through.
  await sender.next((f) => f.id === started.id);
  const before = instruct('before');
  sender.send(before);
  await target.next((f) => f.id === before.id);

  holder = await holdWriteLock(db);
  const why = /locked by another process/;

  // The first command after the lock was taken: its write waits for the lock, then fails.
  const first = instruct('first');
  let from = sender.frames.length;
  let t0 = Date.now();
  sender.send(first);
  const firstAnswer = await sender.next((f) => f.type === 'error' && f.cause === first.id, from);
  const firstMs = Date.now() - t0;
  assert.is(firstAnswer.code, 'store-unavailable', JSON.stringify(firstAnswer));
  // D41: handed to its target while its write waited for the lock, so its outcome is unknown.
  assert.is(firstAnswer.outcome, 'unknown', JSON.stringify(firstAnswer));
  await target.next((f) => f.id === first.id);
  assert.match(firstAnswer.detail, why);
  assert.ok(firstMs <= REFUSAL_MS, `the first command's refusal took ${firstMs} ms`);
  console.log(`first command refused after ${firstMs} ms: ${firstAnswer.detail}`);

  const refusedIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const e = em.emit({ type: 'progress.status', data: { phase: `locked ${i}` } });
    from = target.frames.length;
    t0 = Date.now();
    target.send(e);
    const r = await target.next((f) => f.type === 'error' && f.cause === e.id, from);
    assert.is(r.code, 'store-unavailable');
    assert.match(r.detail, why);
    assert.ok(Date.now() - t0 <= REFUSAL_MS, `socket refusal took ${Date.now() - t0} ms`);

    t0 = Date.now();
    const http = await post(relay.url, `${JSON.stringify(em.emit({ type: 'progress.status', data: { i } }))}\n`, auth);
    assert.is(http.status, 503, JSON.stringify(http.body));
    assert.is(http.body.code, 'store-unavailable');
    assert.match(http.body.detail, why);
    assert.ok(Date.now() - t0 <= REFUSAL_MS, `HTTP refusal took ${Date.now() - t0} ms`);

    const cmd = instruct(`locked ${i}`);
    from = sender.frames.length;
    t0 = Date.now();
    sender.send(cmd);
    const answer = await sender.next((f) => f.type === 'error' && f.cause === cmd.id, from);
    assert.is(answer.code, 'store-unavailable');
    assert.is(answer.outcome, undefined, 'refused before the forward: its outcome is known');
    assert.match(answer.detail, why);
    assert.ok(Date.now() - t0 <= REFUSAL_MS, `command refusal took ${Date.now() - t0} ms`);
    refusedIds.push(cmd.id);
  }
  await sleep(300);
  for (const id of refusedIds) assert.is(delivered(id), 0, `command ${id} was forwarded while its write was refused`);
  const h = await health();
  assert.is(h.status, 503);
  assert.is(h.body.ok, false);
  assert.match(h.body.reason ?? '', why);
  assert.ok(relay.proc.exitCode === null, `the relay exited: ${relay.output()}`);
  assert.match(relay.output(), /store write failed: .*locked by another process/);

  // The other process commits and goes: the relay's probe finds the file writable again.
  const gone = new Promise((r) => holder!.once('exit', r));
  holder.stdin!.write('commit\n');
  await gone;
  holder = undefined;
  t0 = Date.now();
  while (Date.now() - t0 < 10_000 && (await health()).status !== 200) await sleep(100);
  assert.is((await health()).status, 200, 'healthz still 503 after the lock was released');
  console.log(`writes resumed ${((Date.now() - t0) / 1000).toFixed(1)} s after the lock was released`);

  from = sender.frames.length;
  const to = target.frames.length;
  sender.send(first);
  await target.next((f) => f.id === first.id, to);
  await sleep(300);
  assert.is(delivered(first.id), 2, 'the retried command was not handed on once more (its target dedupes it)');
  assert.not.ok(
    sender.frames.slice(from).some((f) => f.json?.type === 'error'),
    'the retried command was refused after the lock was released',
  );

  const res = await fetch(
    `${relay.url}/stream?${new URLSearchParams({ live: '0', filter: JSON.stringify({ session }) })}`,
    { headers: auth },
  );
  const ids = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => (JSON.parse(l.slice(6)) as { id: string }).id);
  assert.ok(ids.includes(started.id) && ids.includes(before.id), 'what was stored before the lock is in history');
  assert.is(ids.filter((id) => id === first.id).length, 1, 'the retried command is in history once');
  for (const id of refusedIds) assert.not.ok(ids.includes(id), `refused ${id} is in history`);
  target.close();
  sender.close();
});

test.run();
