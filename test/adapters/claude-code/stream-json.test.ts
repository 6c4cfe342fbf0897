// The Claude Code stream-json lane's maps (pure): the uuid a command id travels under, what each
// line the CLI prints means, the arguments of a headless run; then the lane itself on its real
// socket, with this test as the run on the other end (what the run relays from the CLI is written
// by hand, as 2.1.332 prints it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, take, toArray, type Observable } from 'rxjs';
import type { LaneFact } from '../../../src/streams/lane.js';
import { RUN_EXIT, runVendor } from '../../../src/cli/run-command.js';
import { textSink } from '../../support/tui.js';
import { streamJsonLane } from '../../../src/adapters/claude-code/stream-json/lane.js';
import { headlessArgs } from '../../../src/adapters/claude-code/stream-json/run.js';
import {
  lineReader,
  readLine,
  uuidFor,
  userLine,
  type Line,
} from '../../../src/adapters/claude-code/stream-json/stream.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('uuidFor: a UUID v4 shape, the same for the same command id, another for another', () => {
  const a = uuidFor('01JCMD000000000000000000A');
  assert.match(a, UUID_V4);
  assert.is(uuidFor('01JCMD000000000000000000A'), a);
  assert.is.not(uuidFor('01JCMD000000000000000000B'), a);
  for (let i = 0; i < 50; i++) assert.match(uuidFor(`cmd-${i}`), UUID_V4);
});

test('userLine: no priority folds into the running turn; later waits for a turn of its own', () => {
  assert.equal(userLine('u1', 'hi'), {
    type: 'user',
    message: { role: 'user', content: 'hi' },
    uuid: 'u1',
    parent_tool_use_id: null,
    session_id: '',
  });
  assert.is(userLine('u1', 'hi', 'later').priority, 'later');
});

test('readLine: turns, receipts, withdrawals and control answers as 2.1.332 prints them', () => {
  assert.equal(readLine({ type: 'system', subtype: 'init', session_id: 's1' }), { kind: 'init', session: 's1' });
  assert.equal(readLine({ type: 'system', subtype: 'hook_response', session_id: 's1' }), { kind: 'other' });
  assert.equal(readLine({ type: 'result', subtype: 'success', session_id: 's1', terminal_reason: 'completed' }), {
    kind: 'result',
    session: 's1',
    status: 'success',
    interrupted: false,
  });
  const aborted = readLine({ type: 'result', subtype: 'error_during_execution', terminal_reason: 'aborted_tools' });
  assert.equal(aborted, { kind: 'result', status: 'error_during_execution', interrupted: true });
  assert.equal(readLine({ type: 'command_lifecycle', command_uuid: 'u', state: 'started' }), {
    kind: 'read',
    uuid: 'u',
  });
  assert.equal(readLine({ type: 'command_lifecycle', command_uuid: 'u', state: 'queued' }), { kind: 'other' });
  assert.equal(readLine({ type: 'command_lifecycle', command_uuid: 'u', state: 'cancelled' }), {
    kind: 'cancelled',
    uuid: 'u',
  });
  assert.equal(readLine({ type: 'user', uuid: 'u', isReplay: true }), { kind: 'read', uuid: 'u' });
  assert.equal(readLine({ type: 'user', uuid: 'u' }), { kind: 'other' }, 'a tool result is no receipt');
  assert.equal(
    readLine({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'r1', response: { cancelled: true } },
    }),
    { kind: 'answer', requestId: 'r1', ok: true, response: { cancelled: true } },
  );
  assert.equal(
    readLine({ type: 'control_response', response: { subtype: 'error', request_id: 'r2', error: 'nope' } }),
    { kind: 'answer', requestId: 'r2', ok: false, response: { error: 'nope' } },
  );
});

test('lineReader: lines split across chunks; what does not parse goes aside', () => {
  const got: Line[] = [];
  const bad: string[] = [];
  const feed = lineReader(
    (l) => got.push(l),
    (t) => bad.push(t),
  );
  feed('{"a":1}\n{"b"');
  feed(':2}\nwarning: x\n[1]\n\n');
  assert.equal(got, [{ a: 1 }, { b: 2 }]);
  assert.equal(bad, ['warning: x', '[1]']);
});

test('headlessArgs: the prompt after -p; the stream-json flags added once; another format refused', () => {
  assert.equal(headlessArgs(['-p', 'do it', '--model', 'm']), {
    args: [
      '-p',
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--verbose',
      '--replay-user-messages',
      '--model',
      'm',
    ],
    prompt: 'do it',
  });
  const fromStdin = headlessArgs(['-p', '--verbose', '--output-format=stream-json']);
  assert.ok(!('error' in fromStdin) && fromStdin.prompt === undefined, 'no prompt: stdin gives it');
  assert.equal(!('error' in fromStdin) && fromStdin.args.filter((a) => a === '--verbose').length, 1);
  assert.equal(!('error' in fromStdin) && fromStdin.args.filter((a) => a.startsWith('--output-format')).length, 1);
  const text = headlessArgs(['-p', 'x', '--output-format', 'text']);
  assert.ok('error' in text && text.error.includes('stream-json'));
});

/** The run's end of the socket: lines the lane writes, and a way to print as the CLI would. */
async function runSide(path: string): Promise<{ sock: Socket; got: Line[]; print(l: Line): void }> {
  const sock = connect(path);
  await new Promise((r) => sock.once('connect', r));
  const got: Line[] = [];
  sock.on(
    'data',
    lineReader((l) => got.push(l)),
  );
  return { sock, got, print: (l) => sock.write(`${JSON.stringify(l)}\n`) };
}
type SessionFact = Exclude<LaneFact, { kind: 'lost' }>;
const next = (facts: Observable<LaneFact>, kind: SessionFact['kind']): Promise<SessionFact> =>
  firstValueFrom(facts.pipe(filter((f): f is SessionFact => f.kind === kind)));
const until = async (probe: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !probe(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(probe(), 'in time');
};

test('the lane on its socket: reach, idle refusal, steer and its receipt, queue, withdraw, interrupt, detach', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-sj-'));
  const path = join(dir, 'claude-code', 'stream-json.sock');
  const lane = streamJsonLane({ socketPath: path, answerMs: 2000 });
  try {
    assert.equal(await lane.open!(), { address: path });
    assert.is(statSync(path).mode & 0o777, 0o600);
    assert.is(statSync(join(dir, 'claude-code')).mode & 0o777, 0o700);
    const run = await runSide(path);
    const attached = next(lane.facts$, 'attached');
    const started = next(lane.facts$, 'turn.started');
    run.print({ type: 'system', subtype: 'init', session_id: 's1' });
    assert.is((await attached).session, 's1');
    assert.is((await started).session, 's1');
    assert.ok(lane.reaches('s1'));
    assert.not.ok(lane.reaches('s2'));
    const other = await lane.steer({ session: 's2', commandId: 'c0', text: 'x' });
    assert.equal(other.ok ? 'ok' : other.reason, 'unreachable');

    const steer = await lane.steer({ session: 's1', commandId: 'c1', text: 'STEER' });
    assert.equal(steer, { ok: true, ref: uuidFor('c1') });
    await until(() => run.got.length === 1);
    assert.equal(run.got[0], userLine(uuidFor('c1'), 'STEER'));
    const delivered = next(lane.facts$, 'delivered');
    run.print({ type: 'command_lifecycle', command_uuid: uuidFor('c1'), state: 'queued' });
    run.print({ type: 'command_lifecycle', command_uuid: uuidFor('c1'), state: 'started' });
    run.print({ type: 'user', uuid: uuidFor('c1'), isReplay: true });
    assert.equal(await delivered, {
      kind: 'delivered',
      session: 's1',
      at: (await delivered).at,
      commandId: 'c1',
      ref: uuidFor('c1'),
    });

    assert.ok((await lane.queue!({ session: 's1', commandId: 'c2', text: 'LATER' })).ok);
    await until(() => run.got.length === 2);
    assert.is(run.got[1]!.priority, 'later');
    const withdrawn = lane.withdraw!({ session: 's1', commandId: 'c2' });
    await until(() => run.got.length === 3);
    const req = run.got[2]!;
    assert.equal(req.request, { subtype: 'cancel_async_message', message_uuid: uuidFor('c2') });
    run.print({
      type: 'control_response',
      response: { subtype: 'success', request_id: req.request_id, response: { cancelled: true } },
    });
    assert.equal(await withdrawn, { removed: true });

    // A steer not read yet is taken back before the interrupt (a still-queued message would run
    // next); a `later` one is the queue, which a cancel keeps (D44): it is left to run next.
    assert.ok((await lane.queue!({ session: 's1', commandId: 'c5', text: 'KEPT' })).ok);
    assert.ok((await lane.steer({ session: 's1', commandId: 'c3', text: 'WAITS' })).ok);
    await until(() => run.got.length === 5);
    const stopped = lane.interrupt!('s1');
    await until(() => run.got.length === 6);
    assert.equal(run.got[5]!.request, { subtype: 'cancel_async_message', message_uuid: uuidFor('c3') });
    run.print({
      type: 'control_response',
      response: { subtype: 'success', request_id: run.got[5]!.request_id, response: { cancelled: true } },
    });
    await until(() => run.got.length === 7);
    assert.equal(run.got[6]!.request, { subtype: 'interrupt' }, 'the queued one was not taken back');
    const ended = next(lane.facts$, 'turn.ended');
    run.print({
      type: 'control_response',
      response: { subtype: 'success', request_id: run.got[6]!.request_id, response: { still_queued: [uuidFor('c5')] } },
    });
    assert.equal(await stopped, { ok: true });
    run.print({
      type: 'result',
      subtype: 'error_during_execution',
      session_id: 's1',
      terminal_reason: 'aborted_tools',
    });
    const end = await ended;
    assert.equal([end.kind === 'turn.ended' && end.interrupted], [true]);
    const idle = await lane.steer({ session: 's1', commandId: 'c4', text: 'x' });
    assert.equal(idle.ok ? 'ok' : idle.reason, 'idle');

    const detached = next(lane.facts$, 'detached');
    run.sock.end();
    assert.is((await detached).session, 's1');
    assert.not.ok(lane.reaches('s1'));
  } finally {
    await lane.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second turn of the same run is a turn of its own; a control request the CLI never answers fails', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-sj-'));
  const path = join(dir, 's.sock');
  const lane = streamJsonLane({ socketPath: path, answerMs: 100 });
  try {
    await lane.open!();
    const run = await runSide(path);
    const turns = firstValueFrom(
      lane.facts$.pipe(
        filter((f) => f.kind === 'turn.started'),
        take(2),
        toArray(),
      ),
    );
    run.print({ type: 'system', subtype: 'init', session_id: 's1' });
    run.print({ type: 'result', subtype: 'success', session_id: 's1' });
    run.print({ type: 'system', subtype: 'init', session_id: 's1' });
    const [a, b] = await turns;
    assert.ok(a?.kind === 'turn.started' && b?.kind === 'turn.started' && a.turnId !== b.turnId);
    assert.equal(await lane.withdraw!({ session: 's1', commandId: 'c9' }), { error: 'claude did not answer in time' });
  } finally {
    await lane.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('`run claude` is the Claude Code lane (its own command name); with no adapter set up it says how to start one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-sj-run-'));
  try {
    const err = textSink();
    const code = await runVendor('claude', ['-p', 'hi'], {}, { err: err.stream }, { AEP_STATE_DIR: dir });
    assert.is(code, RUN_EXIT.noAdapter);
    assert.match(err.text(), 'no claude-code adapter was set up here; start it first: `aep-steer adapter claude-code');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
