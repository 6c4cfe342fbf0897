import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WATCH_EXIT, formatLine, runWatch, watchRequest } from '../../src/cli/watch-command.js';
import { runInstruct } from '../../src/cli/instruct-command.js';
import { plain, paintFor } from '../../src/audit/paint.js';
import { SessionEmitter, command } from '../../src/protocol/index.js';
import { sink, startTestStack, type TestStack } from './support.js';

let stack: TestStack;
test.before(async () => {
  stack = await startTestStack();
});
test.after(async () => {
  await stack.stop();
});

const base = () => ({ relay: stack.relayUrl, token: stack.token, sender: 'watcher' });

test('usage: bad JSON, a refused filter key, a bad capture level and a conflicting session exit 2', async () => {
  assert.ok('error' in watchRequest({ filter: '{' }));
  assert.match((watchRequest({ filter: '{"data":1}' }) as { error: string }).error, 'invalid filter');
  assert.ok('error' in watchRequest({ capture: 'everything' }));
  assert.ok('error' in watchRequest({ filter: '{"session":"a"}', session: 'b' }));
  assert.equal(watchRequest({ filter: '{"type":"x.claude-code.*"}', session: 's', capture: 'metadata', limit: '3' }), {
    filter: { type: 'x.claude-code.*', session: 's' }, capture: 'metadata', limit: 3,
  });
  const err = sink();
  assert.is(await runWatch({ ...base(), filter: '{"seq":1}' }, { out: sink().stream, err: err.stream }), WATCH_EXIT.usage);
  assert.match(err.text(), '"seq" is not filterable');
});

test('follows one session live, readable lines in order, until --limit', async () => {
  const s = await stack.openSession();
  const out = sink();
  let ready!: () => void;
  const live = new Promise<void>((r) => (ready = r));
  const watching = runWatch({ ...base(), session: s.session, limit: '4' }, { out: out.stream, err: sink().stream, onReady: ready });
  await live; // an instruct round makes 4 events of this session
  const accepted = stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  const sending = runInstruct('look at the failing test', { ...base(), session: s.session, wait: true, timeout: '20000', ackWindow: '10000' }, { out: sink().stream, err: sink().stream });
  await accepted;
  await stack.postHook(s.toolCall[0]!);
  await sending;
  assert.is(await watching, WATCH_EXIT.ok);
  const lines = out.text().trim().split('\n');
  assert.is(lines.length, 4);
  assert.match(lines[0]!, 'x.claude-code.control.instruct  "look at the failing test"');
  assert.match(lines[1]!, 'control.accepted');
  assert.match(lines[2]!, 'tool.requested  Bash');
  assert.match(lines[3]!, /x\.claude-code\.instruction\.delivered {2}after \d+ ms ← \w+/);
  assert.not.match(out.text(), '\u001b['); // not a TTY: no colour
});

test('--capture metadata withholds instruction text; --json prints the events as received', async () => {
  const s = await stack.openSession();
  const out = sink();
  let ready!: () => void;
  const live = new Promise<void>((r) => (ready = r));
  const watching = runWatch({ ...base(), filter: '{"type":"x.claude-code.control.instruct"}', session: s.session, capture: 'metadata', limit: '1', json: true }, { out: out.stream, err: sink().stream, onReady: ready });
  await live;
  await runInstruct('secret plan', { ...base(), session: s.session, wait: false, timeout: '20000', ackWindow: '10000' }, { out: sink().stream, err: sink().stream });
  assert.is(await watching, WATCH_EXIT.ok);
  const e = JSON.parse(out.text());
  assert.is(e.type, 'x.claude-code.control.instruct');
  assert.is(e.capture, 'metadata');
  assert.is(e.data?.text, undefined);
  assert.match(formatLine(e, plain), '(text withheld at capture metadata)');
});

test('--replay starts with history; an interrupt ends with exit 0', async () => {
  const em = new SessionEmitter({ agent: 'claude-code', session: 'replayed-1', host: 'h' });
  const r = await fetch(`${stack.relay.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'aep-version': '0.1', authorization: `Bearer ${stack.token}` },
    body: JSON.stringify(em.emit({ type: 'session.started' })),
  });
  assert.ok(r.status < 300);
  await stack.waitFor((e) => e.session === 'replayed-1');
  const out = sink();
  assert.is(await runWatch({ ...base(), session: 'replayed-1', replay: true, limit: '1' }, { out: out.stream, err: sink().stream }), WATCH_EXIT.ok);
  assert.match(out.text(), 'replayed-1  claude-code  session.started');
  const stop = new AbortController();
  const watching = runWatch({ ...base(), session: 'replayed-1' }, { out: sink().stream, err: sink().stream, onReady: () => stop.abort() }, stop.signal);
  assert.is(await watching, WATCH_EXIT.ok);
});

test('colour only on a TTY without NO_COLOR', () => {
  const e = command({ agent: 'a', host: 'h' }, 's', { type: 'x.claude-code.control.instruct', data: { text: 'x' }, capture: 'redacted' });
  assert.match(formatLine(e, paintFor({ isTTY: true }, {})), '\u001b[');
  assert.not.match(formatLine(e, paintFor({ isTTY: true }, { NO_COLOR: '1' })), '\u001b[');
  assert.not.match(formatLine(e, paintFor({ isTTY: false }, {})), '\u001b[');
});

test('the relay going away ends the watch with exit 7', async () => {
  const other = await startTestStack();
  const err = sink();
  let ready!: () => void;
  const live = new Promise<void>((r) => (ready = r));
  const watching = runWatch({ relay: other.relayUrl, token: other.token, sender: 'w' }, { out: sink().stream, err: err.stream, onReady: ready });
  await live;
  await other.stop();
  assert.is(await watching, WATCH_EXIT.unreachable);
  assert.match(err.text(), 'relay connection closed');
});

test('an unreachable relay exits 7', async () => {
  const err = sink();
  assert.is(await runWatch({ ...base(), relay: 'ws://127.0.0.1:1/socket' }, { out: sink().stream, err: err.stream }), WATCH_EXIT.unreachable);
});

test.run();
