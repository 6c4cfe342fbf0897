// The Copilot server lane against a stand-in run that answers and emits exactly what Copilot CLI
// 1.0.102's headless server was seen to (copilot-opencode-observed §1): `session.send` answers
// `{messageId}`, its receipt is `user.message {messageId, delivery}` (which may come before the
// answer), abort ends the turn with `abort` then `session.idle`, and permissions arrive as
// `permission.requested` and settle with `permission.completed`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, ReplaySubject } from 'rxjs';
import { copilotServerLane } from '../../../src/adapters/copilot/server/lane.js';
import { wireReader, writeWire, type CopilotEvent, type WireLine } from '../../../src/adapters/copilot/server/wire.js';
import type { LaneFact, SteeringLane } from '../../../src/streams/lane.js';

const SESSION = 'sess-1';
let dir = '';
let lane: SteeringLane;
let facts: ReplaySubject<LaneFact>;
let seen: LaneFact[];
let run: Socket;
let calls: { method: string; params: Record<string, unknown> }[];
/** How the stand-in answers each method; an event list is emitted before (`early`) or after the answer. */
let answer: (
  method: string,
  params: Record<string, unknown>,
) => { result: unknown; early?: CopilotEvent[]; after?: CopilotEvent[] };

const emit = (event: CopilotEvent): void => void writeWire(run, { type: 'event', event });
const fact = (match: (f: LaneFact) => boolean): Promise<LaneFact> => firstValueFrom(facts.pipe(filter(match)));
const userMessage = (messageId: string, delivery: string, content = 'x'): CopilotEvent => ({
  type: 'user.message',
  data: { content, messageId, delivery },
});

test.before.each(async () => {
  dir = mkdtempSync(join(tmpdir(), 'aep-copilot-lane-'));
  lane = copilotServerLane({ socketPath: join(dir, 'copilot', 'server.sock'), answerMs: 5_000 });
  facts = new ReplaySubject();
  lane.facts$.subscribe(facts);
  seen = [];
  lane.facts$.subscribe((f) => seen.push(f));
  calls = [];
  let n = 0;
  answer = (method) => (method === 'session.send' ? { result: { messageId: `m-${++n}` } } : { result: {} });
  const opened = await lane.open!();
  run = connect(String(opened.address));
  await new Promise((r) => run.once('connect', r));
  run.on(
    'data',
    wireReader((l: WireLine) => {
      if (l.type !== 'call') return;
      calls.push({ method: l.method, params: l.params });
      const a = answer(l.method, l.params);
      for (const e of a.early ?? []) emit(e);
      writeWire(run, { type: 'answer', id: l.id, result: a.result });
      for (const e of a.after ?? []) emit(e);
    }),
  );
  writeWire(run, { type: 'session', sessionId: SESSION });
  await fact((f) => f.kind === 'attached');
});
test.after.each(async () => {
  run.destroy();
  await lane.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The run's first prompt opens a turn (a `user.message` with delivery idle). */
async function turnRunning(): Promise<void> {
  emit(userMessage('m-first', 'idle', 'the prompt'));
  await fact((f) => f.kind === 'turn.started');
}

test('steer: send mode "immediate" into the running turn; receipted by its user.message, even one overtaking the answer', async () => {
  await turnRunning();
  answer = () => ({ result: { messageId: 'm-steer' }, early: [userMessage('m-steer', 'steering')] });
  const o = await lane.steer({ session: SESSION, commandId: 'c-1', text: 'STEER' });
  assert.equal(o, { ok: true, ref: 'm-steer' });
  assert.equal(calls[0], { method: 'session.send', params: { prompt: 'STEER', mode: 'immediate' } });
  const d = await fact((f) => f.kind === 'delivered');
  assert.equal({ ...d, at: 0 }, { kind: 'delivered', session: SESSION, at: 0, commandId: 'c-1', ref: 'm-steer' });
});

test('steer and queue with no turn running are refused idle and send nothing (only a start begins a turn, D43)', async () => {
  assert.equal((await lane.steer({ session: SESSION, commandId: 'c-1', text: 'S' })).ok, false);
  const q = await lane.queue!({ session: SESSION, commandId: 'c-2', text: 'Q' });
  assert.equal(q.ok ? undefined : q.reason, 'idle');
  assert.is(calls.length, 0);
});

test('queue: mode "enqueue", and a withdraw before it is read takes it back by its message id and text', async () => {
  await turnRunning();
  const o = await lane.queue!({ session: SESSION, commandId: 'c-q', text: 'LATER' });
  assert.equal(o, { ok: true, ref: 'm-1' });
  assert.equal(calls[0]!.params, { prompt: 'LATER', mode: 'enqueue' });
  answer = () => ({ result: { removed: true, interrupted: false } });
  assert.equal(await lane.withdraw!({ session: SESSION, commandId: 'c-q' }), { removed: true });
  assert.equal(calls[1], {
    method: 'session.queue.withdrawMessage',
    params: { messageId: 'm-1', expectedPrompt: 'LATER' },
  });
  // A withdrawn message's id no longer receipts anything.
  emit(userMessage('m-1', 'queued'));
  emit({ type: 'session.idle', data: {} });
  const end = await fact((f) => f.kind === 'turn.ended');
  assert.ok(end.kind === 'turn.ended' && !end.interrupted);
  assert.not.ok(
    seen.some((f) => f.kind === 'delivered'),
    'a withdrawn message is never receipted',
  );
});

test('a start while idle begins a turn: delivered started, its ref the turn it began', async () => {
  answer = () => ({ result: { messageId: 'm-s' }, after: [userMessage('m-s', 'idle', 'START')] });
  const o = await lane.startTurn!({ session: SESSION, commandId: 'c-s', text: 'START', otherwise: 'queue' });
  assert.ok(o.ok);
  const d = await fact((f) => f.kind === 'delivered');
  assert.equal(
    { ...d, at: 0 },
    {
      kind: 'delivered',
      session: SESSION,
      at: 0,
      commandId: 'c-s',
      ref: `${SESSION}:1`,
      started: true,
    },
  );
});

test('a start that finds a turn running goes in as its delivery says, and says so (became)', async () => {
  await turnRunning();
  const o = await lane.startTurn!({ session: SESSION, commandId: 'c-s', text: 'START', otherwise: 'queue' });
  assert.equal(o, { ok: true, ref: 'm-1', became: 'queue' });
  assert.is(calls[0]!.params.mode, 'enqueue');
});

test('cancel: session.abort; the turn ends interrupted at the next session.idle', async () => {
  await turnRunning();
  answer = () => ({
    result: { success: true },
    after: [
      { type: 'abort', data: { reason: 'remote_command' } },
      { type: 'assistant.turn_end', data: { turnId: '0' } },
      { type: 'session.idle', data: {} },
    ],
  });
  assert.equal(await lane.interrupt!(SESSION), { ok: true });
  assert.equal(calls[0], { method: 'session.abort', params: { reason: 'remote_command' } });
  const end = await fact((f) => f.kind === 'turn.ended');
  assert.ok(end.kind === 'turn.ended' && end.interrupted && end.status === 'interrupted');
  assert.equal(await lane.interrupt!(SESSION), { ok: false, detail: 'no turn is running' });
});

test('a permission request is held with what it runs, and a deny is answered reject with the words', async () => {
  await turnRunning();
  emit({
    type: 'permission.requested',
    data: {
      requestId: 'p-1',
      permissionRequest: { kind: 'shell', toolCallId: 't-1', fullCommandText: 'rm -rf build' },
      promptRequest: { kind: 'commands', toolCallId: 't-1', fullCommandText: 'rm -rf build' },
    },
  });
  const a = await fact((f) => f.kind === 'approval');
  assert.ok(a.kind === 'approval' && a.approvalId === 'p-1' && a.request.detail === 'rm -rf build');
  assert.equal(await lane.answer!(SESSION, 'p-1', false, 'not that'), { ok: true });
  assert.equal(calls[0], {
    method: 'session.permissions.handlePendingPermissionRequest',
    params: { requestId: 'p-1', result: { kind: 'reject', feedback: 'not that' } },
  });
  emit({ type: 'permission.completed', data: { requestId: 'p-1', result: { kind: 'denied-interactively-by-user' } } });
  const r = await fact((f) => f.kind === 'approval.resolved');
  assert.ok(r.kind === 'approval.resolved' && r.approved === false);
});

test('a permission a hook already settled is not held; a run that leaves detaches its session', async () => {
  emit({
    type: 'permission.requested',
    data: { requestId: 'p-2', resolvedByHook: true, permissionRequest: { kind: 'shell' } },
  });
  run.destroy();
  const d = await fact((f) => f.kind === 'detached' || f.kind === 'approval');
  assert.is(d.kind, 'detached');
  assert.is(lane.reaches(SESSION), false);
});

test.run();
