// D38 on the SQLite store: a real relay process whose store file sits on a filesystem that fills
// up (a small tmpfs where one can be mounted; else the relay process's file size limit,
// RLIMIT_FSIZE, lowered to what the files hold). Events are sent until the store refuses one.
// Asserted while it cannot write: every event (socket and HTTP) and every command is refused
// `store-unavailable` with the reason within 2 s, no command reaches its target (but the first
// one whose write failed on the filling disk, handed on before its write and so told `outcome:
// unknown` (D41); sent again later, it is handed on once more and stored once), `/healthz`
// answers 503 with the reason, the relay lives. After space is freed: `/healthz` 200, a later
// event waits until the refused ones are sent again (no hole for the adapter's resend to
// skip), commands are forwarded again, and the history holds every event taken or resent and
// no refused command.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { fill, mountTmpfs } from '../support/full-disk.js';
import { startRelayNode, type RelayNode } from '../support/relay-node.js';
import { emitterFor, freshSession, post, WsPeer } from '../support/relay-harness.js';

const TOKEN = 'full-disk-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const REFUSAL_MS = 2000;
const TYPE = 'x.test-target.control.instruct';

const base = mkdtempSync(join(tmpdir(), 'aep-full-disk-'));
const dir = join(base, 'store');
let mounted = false;
let relay: RelayNode | undefined;
test.after(async () => {
  await relay?.kill();
  if (mounted) spawnSync('umount', [dir], { stdio: 'ignore' });
  rmSync(base, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const fileSize = (p: string) => {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
};

const health = async () => {
  const r = await fetch(`${relay!.url}/healthz`, { headers: auth });
  return { status: r.status, body: (await r.json()) as { ok: boolean; reason?: string } };
};

test('a full disk under the SQLite store: store-unavailable within 2 s, nothing forwarded, healthz 503, then recovery', async () => {
  mounted = mountTmpfs(dir, '4m');
  const db = join(dir, 'relay.db');
  relay = await startRelayNode(['--token', TOKEN, '--store', db]);
  const pid = relay.proc.pid!;
  let limited = false;
  const makeFull = () => {
    if (mounted) return fill(dir);
    // No mount here: the process may not grow any file past what the store's files hold now.
    const cap = Math.max(fileSize(db), fileSize(`${db}-wal`), 4096);
    const r = spawnSync('prlimit', ['--pid', String(pid), `--fsize=${cap}:unlimited`]);
    assert.is(r.status, 0, `prlimit failed: ${r.stderr}`);
    limited = true;
  };
  const makeRoom = () => {
    if (mounted) return rmSync(join(dir, 'filler'), { force: true });
    spawnSync('prlimit', ['--pid', String(pid), '--fsize=unlimited:unlimited']);
    limited = false;
  };
  console.log(`full disk by ${mounted ? 'a 4 MB tmpfs' : 'RLIMIT_FSIZE on the relay process'}`);

  const session = freshSession('full');
  const em = emitterFor(session, 'test-agent');
  const target = await WsPeer.target(relay.socketUrl, 'test-agent', [TYPE], TOKEN);
  const sender = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  const accepted: string[] = [];
  const send = async (data: Record<string, unknown>) => {
    const e = em.emit({ type: 'progress.status', data });
    const from = target.frames.length;
    const t0 = Date.now();
    target.send(e);
    // Taken: no refusal within a moment; refused: an error frame naming it.
    const refusal = await target.next((f) => f.type === 'error' && f.cause === e.id, from).catch(() => undefined);
    return { e, refusal, ms: Date.now() - t0 };
  };
  const first = await send({ phase: 'before' });
  assert.is(first.refusal, undefined, 'an event before the disk filled was refused');
  accepted.push(first.e.id);

  makeFull();
  // Commands until the store refuses one: the WAL may still have room for some writes. D41: each
  // goes to its target at once, while its write is under way; a read of history waits for that
  // write, so it shows whether the command was kept. The first one not kept is told to its sender
  // as store-unavailable with outcome unknown (it reached its target), never as refused outright.
  const big = 'x'.repeat(8000);
  const instruct = (text: string) =>
    command({ agent: 'test-cli', host: 'h' }, session, { type: TYPE, capture: 'redacted', data: { text, big } });
  const delivered = (id: string) => target.frames.filter((f) => f.json?.id === id).length;
  const stored = async (): Promise<string[]> => {
    const res = await fetch(
      `${relay!.url}/stream?${new URLSearchParams({ live: '0', filter: JSON.stringify({ session }) })}`,
      { headers: auth },
    );
    return (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => (JSON.parse(l.slice(6)) as { id: string }).id);
  };
  let refused: { code: string; detail: string; outcome?: string } | undefined;
  let firstRefused: AepEvent | undefined;
  const forwarded: string[] = [];
  for (let i = 0; i < 400 && refused === undefined; i++) {
    const cmd = instruct(`fill ${i}`);
    const from = sender.frames.length;
    const toTarget = target.frames.length;
    sender.send(cmd);
    await target.next((f) => f.id === cmd.id, toTarget);
    if ((await stored()).includes(cmd.id)) forwarded.push(cmd.id);
    else {
      refused = await sender.next((f) => f.type === 'error' && f.cause === cmd.id, from);
      firstRefused = cmd;
    }
  }
  assert.ok(refused && firstRefused, 'the store never refused a write on the full disk');
  assert.is(refused.code, 'store-unavailable', JSON.stringify(refused));
  assert.is(refused.outcome, 'unknown', 'a command handed on before its write failed: its outcome is unknown');
  console.log(`first command refused after ${forwarded.length} more were stored and delivered: ${refused.detail}`);
  assert.is(delivered(firstRefused.id), 1, 'the first command whose write failed reached its target once');
  for (const id of forwarded)
    assert.not.ok(
      sender.frames.some((f) => f.json?.type === 'error' && f.json?.cause === id),
      `command ${id} was stored and refused`,
    );
  /** Socket events refused for now, as an adapter keeps them to send again. */
  const unsent: AepEvent[] = [];

  // While it cannot write: each event and command refused store-unavailable within 2 s, with the reason.
  const why = /disk holding the store is full|write to the store file failed/;
  const refusedIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await send({ phase: `while full ${i}` });
    assert.ok(r.refusal, `an event was taken while the disk is full (${i})`);
    assert.is(r.refusal.code, 'store-unavailable');
    assert.match(r.refusal.detail, why);
    assert.ok(r.ms <= REFUSAL_MS, `socket refusal took ${r.ms} ms`);
    unsent.push(r.e);

    const t0 = Date.now();
    const http = await post(relay.url, `${JSON.stringify(em.emit({ type: 'progress.status', data: { i } }))}\n`, auth);
    assert.is(http.status, 503, JSON.stringify(http.body));
    assert.is(http.body.code, 'store-unavailable');
    assert.match(http.body.detail, why);
    assert.ok(Date.now() - t0 <= REFUSAL_MS, `HTTP refusal took ${Date.now() - t0} ms`);

    const cmd = command({ agent: 'test-cli', host: 'h' }, session, {
      type: TYPE,
      capture: 'redacted',
      data: { text: `t${i}` },
    });
    const from = sender.frames.length;
    const c0 = Date.now();
    sender.send(cmd);
    const answer = await sender.next((f) => f.type === 'error' && f.cause === cmd.id, from);
    assert.is(answer.code, 'store-unavailable');
    assert.is(answer.outcome, undefined, 'refused before the forward: its outcome is known');
    assert.match(answer.detail, why);
    assert.ok(Date.now() - c0 <= REFUSAL_MS, `command refusal took ${Date.now() - c0} ms`);
    refusedIds.push(cmd.id);
    await sleep(100);
    assert.not.ok(
      target.frames.some((f) => f.json?.id === cmd.id),
      'a command was forwarded while its store could not write it',
    );
  }
  const h = await health();
  assert.is(h.status, 503);
  assert.is(h.body.ok, false);
  assert.match(h.body.reason ?? '', why);
  assert.ok(relay.proc.exitCode === null, `the relay exited: ${relay.output()}`);
  assert.match(relay.output(), /store write failed: .*(full|failed)/);

  makeRoom();
  // Writes resume: the relay's probe finds the room, then events are taken and commands forwarded.
  const t0 = Date.now();
  while (Date.now() - t0 < 10_000 && (await health()).status !== 200) await sleep(100);
  assert.is((await health()).status, 200, 'healthz still 503 after space was freed');
  console.log(`writes resumed ${((Date.now() - t0) / 1000).toFixed(1)} s after space was freed`);
  // A later event waits for the refused ones (stored first, it would hide them from the
  // adapter's resend, which starts after the highest position held): no hole in history.
  const later = await send({ phase: 'after' });
  assert.is(later.refusal?.code, 'store-unavailable', 'a later event stored before the refused ones');
  assert.match(later.refusal.detail, /is not stored yet; resend from it/);
  const from = target.frames.length;
  for (const e of [...unsent, later.e]) target.send(e);
  await sleep(500);
  const again = target.frames.slice(from).filter((f) => f.json?.type === 'error');
  assert.equal(
    again.map((f) => f.json),
    [],
    'the resent events were refused',
  );
  accepted.push(...unsent.map((e) => e.id), later.e.id);
  const cmd = command({ agent: 'test-cli', host: 'h' }, session, {
    type: TYPE,
    capture: 'redacted',
    data: { text: 'go' },
  });
  sender.send(cmd);
  await target.next((f) => f.id === cmd.id);
  // The command whose write failed when the disk filled, sent again with its id as its sender
  // retries: handed on once more (its target answers a resend with what it recorded).
  const retryFrom = sender.frames.length;
  const retryTo = target.frames.length;
  sender.send(firstRefused);
  await target.next((f) => f.id === firstRefused.id, retryTo);
  await sleep(300);
  assert.is(delivered(firstRefused.id), 2, 'the retried command was not handed on once more');
  assert.not.ok(
    sender.frames.slice(retryFrom).some((f) => f.json?.type === 'error'),
    'the retried command was refused after space returned',
  );

  // History: everything accepted or resent, no refused command.
  const res = await fetch(
    `${relay.url}/stream?${new URLSearchParams({ live: '0', filter: JSON.stringify({ session }) })}`,
    { headers: auth },
  );
  const ids = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => (JSON.parse(l.slice(6)) as { id: string }).id);
  for (const id of accepted) assert.ok(ids.includes(id), `accepted event ${id} not in history`);
  for (const id of forwarded) assert.ok(ids.includes(id), `delivered command ${id} not in history`);
  assert.is(ids.filter((id) => id === firstRefused.id).length, 1, 'the retried command is in history once');
  for (const id of refusedIds) assert.not.ok(ids.includes(id), `refused ${id} is in history`);
  assert.ok(ids.includes(cmd.id), 'the command after recovery is in history');
  assert.not.ok(limited);
  target.close();
  sender.close();
});

test.run();
