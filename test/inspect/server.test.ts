// The inspect page server against a real relay and adapter: /state and the /events stream follow
// an instruction from queued to delivered. The page itself is exercised in page.browser.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:net';
import { startInspect, type InspectHandle } from '../../src/cli/inspect-command.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import type { BoardSnapshot } from '../../src/consumer/board.js';
import { SteeringError } from '../../src/protocol/errors.js';
import { sink, startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let inspect: InspectHandle;
test.before(async () => {
  stack = await startTestStack();
  inspect = await startInspect({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await inspect.follower.ready;
});
test.after(async () => {
  await inspect.close();
  await stack.stop();
});

/** Reads snapshots from /events until one satisfies `test`. */
async function snapshotWhere(test: (s: BoardSnapshot) => boolean): Promise<BoardSnapshot> {
  const ctrl = new AbortController();
  const res = await fetch(`${inspect.url}events`, { signal: ctrl.signal });
  assert.is(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('event stream ended');
      buf += decoder.decode(value, { stream: true });
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const snap = JSON.parse(data.slice(6)) as BoardSnapshot;
        if (test(snap)) return snap;
      }
    }
  } finally {
    ctrl.abort();
  }
}

test('serves the page, and /state and /events follow a session from queued to delivered', async () => {
  const page = await fetch(inspect.url);
  assert.is(page.status, 200);
  assert.match(await page.text(), '<title>aep-steer inspect</title>');

  const s = await stack.openSession();
  const live = await snapshotWhere((snap) => snap.sessions.some((x) => x.session === s.session && x.claimants === 1));
  const view = live.sessions.find((x) => x.session === s.session)!;
  assert.is(view.state, 'idle');
  assert.is(view.agent, 'claude-code');
  assert.ok(view.accepts!.includes('x.claude-code.control.instruct'));
  assert.is(live.relay.connected, true);

  const out = sink();
  assert.is(
    await runInstruct(
      'keep the diff small',
      {
        relay: stack.relayUrl,
        token: stack.token,
        sender: 'dave',
        session: s.session,
        wait: false,
        timeout: '20000',
        ackWindow: '10000',
        json: true,
      },
      { out: out.stream, err: sink().stream },
    ),
    INSTRUCT_EXIT.accepted,
  );
  const id = JSON.parse(out.text()).command as string;
  const queued = await snapshotWhere((snap) =>
    snap.sessions.some((x) => x.session === s.session && x.state === 'queued'),
  );
  const q = queued.sessions.find((x) => x.session === s.session)!.queue;
  assert.equal(
    q.map((i) => [i.id, i.sender, i.text]),
    [[id, 'dave', 'keep the diff small']],
  );

  await stack.postHook(s.toolCall[0]!);
  const delivered = await snapshotWhere((snap) =>
    snap.instructions.some((i) => i.id === id && i.status === 'delivered'),
  );
  assert.is(delivered.sessions.find((x) => x.session === s.session)!.state, 'idle');

  const state = (await (await fetch(`${inspect.url}state`)).json()) as BoardSnapshot;
  assert.ok(state.instructions.some((i) => i.id === id && i.status === 'delivered'));

  await stack.postHook(s.closing[1]!);
  await snapshotWhere((snap) => snap.sessions.some((x) => x.session === s.session && x.state === 'ended'));
});

test('unknown paths are 404, other methods 405', async () => {
  assert.is((await fetch(`${inspect.url}nope`)).status, 404);
  assert.is((await fetch(inspect.url, { method: 'POST' })).status, 405);
});

test('a taken port is a clear PORT_IN_USE error', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    await startInspect({ relay: stack.relayUrl, token: stack.token, port });
    assert.unreachable('should have failed');
  } catch (err) {
    assert.instance(err, SteeringError);
    assert.is((err as SteeringError).code, 'PORT_IN_USE');
    assert.match((err as Error).message, `port ${port}`);
  } finally {
    blocker.close();
  }
});

test.run();
