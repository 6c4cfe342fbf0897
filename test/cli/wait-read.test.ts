// D45 `aep-steer wait` and `aep-steer read` against a real relay and Claude Code adapter: a wait
// returns when the turn ends (and says how, with its own exit code), when a request waits (what
// it asks), or when the session ends; a bounded wait says "still running". `read` prints the
// turn's final answer (the Stop hook's last message) to a reader whose capture allows it, and to
// a metadata reader only that the turn finished.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { READ_EXIT, runRead, runWait, WAIT_EXIT } from '../../src/cli/wait-command.js';
import { foldTurns } from '../../src/consumer/turns.js';
import { permissionRequest, sink, startTestStack, type TestStack } from './support.js';

const WATCHER = 'watcher-token-0123456789';
let stack: TestStack;
test.before(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'aep-wait-')), 'tokens.json');
  writeFileSync(file, JSON.stringify({ tokens: [{ token: WATCHER, identity: 'watcher' }] }), { mode: 0o600 });
  stack = await startTestStack({ tokensFile: file });
});
test.after(async () => {
  await stack.stop();
});

const flags = (session: string, extra: Record<string, unknown> = {}) => ({
  relay: stack.relayUrl,
  token: stack.token,
  sender: 'orch',
  session,
  json: true,
  ...extra,
});

async function wait(session: string, extra: Record<string, unknown> = {}) {
  const out = sink();
  const code = await runWait(flags(session, { timeoutMs: '20000', ...extra }) as never, {
    out: out.stream,
    err: out.stream,
  });
  return { code, o: JSON.parse(out.text()) as Record<string, any> };
}

async function read(session: string, extra: Record<string, unknown> = {}) {
  const out = sink();
  const code = await runRead(flags(session, { turn: 'last', ...extra }) as never, { out: out.stream, err: out.stream });
  return { code, text: out.text() };
}

test('a running turn: a bounded wait says still running; read says it still runs', async () => {
  const s = await stack.openSession();
  const w = await wait(s.session, { timeoutMs: '300' });
  assert.is(w.code, WAIT_EXIT.timeout);
  assert.equal([w.o.outcome, w.o.running, w.o.turns], ['timeout', true, 1]);
  const r = await read(s.session, { json: false });
  assert.is(r.code, READ_EXIT.running);
  assert.match(r.text, /still running: wait for it first/);
});

test('a request waits: wait returns what it asks, with its id and the next step', async () => {
  const s = await stack.openSession();
  const reply = stack.postHook(permissionRequest(s));
  const w = await wait(s.session);
  assert.is(w.code, WAIT_EXIT.request);
  assert.is(w.o.request.kind, 'permission');
  assert.match(w.o.request.prompt, 'touch new-file.txt');
  const text = sink();
  await runWait(flags(s.session, { timeoutMs: '20000', json: false }) as never, { out: text.stream, err: text.stream });
  assert.match(text.text(), /waits for an answer .*aep-steer respond --session/);
  void reply;
});

test('the turn finishes: wait returns it; read gives the final answer; the end ends a later wait', async () => {
  const s = await stack.openSession();
  const waiting = wait(s.session, { for: 'turn-end' });
  for (const h of s.toolCall) await stack.postHook(h);
  await stack.postHook(s.closing[0]!);
  const w = await waiting;
  assert.is(w.code, WAIT_EXIT.finished, JSON.stringify(w.o));
  assert.equal([w.o.outcome, w.o.turn.n, w.o.turn.ended], ['turn-ended', 1, 'finished']);
  const r = await read(s.session, { json: false });
  assert.is(r.code, READ_EXIT.read);
  assert.match(r.text, /Turn 1 of 1 .* finished\. Its final answer:\nPrinted hi\./);
  // Only a turn after the first counts: the session's end answers instead.
  const after = wait(s.session, { afterTurn: '1' });
  await stack.postHook(s.closing[1]!);
  const ended = await after;
  assert.is(ended.code, WAIT_EXIT.ended);
  assert.equal([ended.o.outcome, ended.o.turns], ['ended', 1]);
  // A watch-only (metadata) token reads that the turn finished, never what it said.
  const out = sink();
  const code = await runRead({ ...flags(s.session, { turn: '1', json: false }), token: WATCHER } as never, {
    out: out.stream,
    err: out.stream,
  });
  assert.is(code, READ_EXIT.read);
  assert.match(out.text(), /finished\. Its answer is not shown at this token's capture \(metadata\)/);
  assert.not.match(out.text(), /Printed hi/);
  const none = await read(s.session, { turn: '3' });
  assert.is(none.code, READ_EXIT.noTurn);
});

test('a failed turn: wait says it failed, with its own exit code; read says how it ended', async () => {
  const s = await stack.openSession();
  const waiting = wait(s.session, { for: 'turn-end' });
  const { session_id, transcript_path, cwd } = s.closing[0]!;
  await stack.postHook({ session_id, transcript_path, cwd, hook_event_name: 'StopFailure', error: 'rate_limit' });
  const w = await waiting;
  assert.is(w.code, WAIT_EXIT.failed, JSON.stringify(w.o));
  assert.equal([w.o.outcome, w.o.turn.ended], ['turn-ended', 'failed']);
  const r = await read(s.session, { json: false });
  assert.is(r.code, READ_EXIT.read);
  assert.match(r.text, /failed/);
});

test('bad flags: a usage exit with the reason', async () => {
  const out = sink();
  assert.is(
    await runWait(flags('s', { timeoutMs: '100', for: 'lunch' }) as never, { out: out.stream, err: out.stream }),
    WAIT_EXIT.usage,
  );
  assert.match(out.text(), /--for takes turn-end, request, end/);
  assert.is((await read('s', { turn: '0' })).code, READ_EXIT.usage);
});

test('fold: a cancelled and a failed turn say how, and a reopened session is live again', () => {
  const ev = (type: string, extra: Record<string, unknown> = {}) =>
    ({ type, time: '2026-01-01T00:00:00Z', id: type, agent: 'a', source: 's', specversion: '0.1', ...extra }) as never;
  const s = foldTurns([
    ev('run.started', { run: 'r1' }),
    ev('run.cancelled', { run: 'r1', data: { by: 'control' } }),
    ev('run.started', { run: 'r2' }),
    ev('run.failed', { run: 'r2', data: { reason: 'error' } }),
    ev('session.ended', { data: { reason: 'normal' } }),
    ev('x.codex.session.reopened'),
  ]);
  assert.equal(
    s.turns.map((t) => [t.n, t.ended, t.why]),
    [
      [1, 'cancelled', 'by control'],
      [2, 'failed', 'error'],
    ],
  );
  assert.is(s.ended, undefined);
});

test.run();
