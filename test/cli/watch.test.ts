import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WATCH_EXIT, formatLine, runWatch, watchRequest } from '../../src/cli/watch-command.js';
import { runInstruct } from '../../src/cli/instruct-command.js';
import { plain, paintFor } from '../../src/audit/paint.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionEmitter, command, type AepEvent } from '../../src/protocol/index.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
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
    filter: { type: 'x.claude-code.*', session: 's' },
    capture: 'metadata',
    limit: 3,
  });
  const err = sink();
  assert.is(
    await runWatch({ ...base(), filter: '{"seq":1}' }, { out: sink().stream, err: err.stream }),
    WATCH_EXIT.usage,
  );
  assert.match(err.text(), '"seq" is not filterable');
});

test('follows one session live, readable lines in order, until --limit', async () => {
  const s = await stack.openSession();
  const out = sink();
  let ready!: () => void;
  const live = new Promise<void>((r) => (ready = r));
  const watching = runWatch(
    { ...base(), session: s.session, limit: '4' },
    { out: out.stream, err: sink().stream, onReady: ready },
  );
  await live; // an instruct round makes 4 events of this session
  const accepted = stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  const sending = runInstruct(
    'look at the failing test',
    { ...base(), session: s.session, wait: true, timeout: '20000', ackWindow: '10000' },
    { out: sink().stream, err: sink().stream },
  );
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
  const watching = runWatch(
    {
      ...base(),
      filter: '{"type":"x.claude-code.control.instruct"}',
      session: s.session,
      capture: 'metadata',
      limit: '1',
      json: true,
    },
    { out: out.stream, err: sink().stream, onReady: ready },
  );
  await live;
  await runInstruct(
    'secret plan',
    { ...base(), session: s.session, wait: false, timeout: '20000', ackWindow: '10000' },
    { out: sink().stream, err: sink().stream },
  );
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
  assert.is(
    await runWatch(
      { ...base(), session: 'replayed-1', replay: true, limit: '1' },
      { out: out.stream, err: sink().stream },
    ),
    WATCH_EXIT.ok,
  );
  assert.match(out.text(), 'replayed-1  claude-code  session.started');
  const stop = new AbortController();
  const watching = runWatch(
    { ...base(), session: 'replayed-1' },
    { out: sink().stream, err: sink().stream, onReady: () => stop.abort() },
    stop.signal,
  );
  assert.is(await watching, WATCH_EXIT.ok);
});

test('colour only on a TTY without NO_COLOR', () => {
  const e = command({ agent: 'a', host: 'h' }, 's', {
    type: 'x.claude-code.control.instruct',
    data: { text: 'x' },
    capture: 'redacted',
  });
  assert.match(formatLine(e, paintFor({ isTTY: true }, {})), '\u001b[');
  assert.not.match(formatLine(e, paintFor({ isTTY: true }, { NO_COLOR: '1' })), '\u001b[');
  assert.not.match(formatLine(e, paintFor({ isTTY: false }, {})), '\u001b[');
});

/** Posts events to a relay over HTTP ingest, as any emitter may. */
async function post(url: string, token: string, events: AepEvent[]): Promise<void> {
  const body = events.map((e) => JSON.stringify(e)).join('\n');
  // A fresh connection each time (agent: false): the relay restarts in between.
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      `${url}/events`,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/x-ndjson',
          'aep-version': '0.1',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  assert.is(status, 202);
}

async function until(probe: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !probe(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(probe(), what);
}

test('a relay restart: watch says lost, reconnects, shows what was sent meanwhile, and prints each (source, id) once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-watch-'));
  const store = join(dir, 'relay.db');
  let relay: RelayHandle = await startRelay({ port: 0, storePath: store, token: 'w-token' });
  const port = relay.port;
  const emitter = new SessionEmitter({ agent: 'claude-code', session: 'restart-1', host: 'h' });
  let e1: AepEvent | undefined;
  let e2: AepEvent | undefined;
  let e3: AepEvent | undefined;
  const out = sink();
  const err = sink();
  const stop = new AbortController();
  let ready!: () => void;
  const live = new Promise<void>((r) => (ready = r));
  let reconnected = 0;
  const watching = runWatch(
    { relay: relay.socketUrl, token: 'w-token', sender: 'w', json: true },
    {
      out: out.stream,
      err: err.stream,
      onReady: ready,
      onReconnected: () => {
        reconnected += 1;
      },
    },
    stop.signal,
    () => 300,
  );
  try {
    await live;
    e1 = emitter.emit({ type: 'session.started' });
    await post(relay.url, 'w-token', [e1!]);
    await until(() => out.text().includes(e1!.id), 'e1 printed live');
    await relay.close();
    await until(() => err.text().includes('watch: relay connection lost; reconnecting'), 'says it lost the relay');
    // Back on the same port and store; e2 goes in before the watch is back.
    relay = await startRelay({ port, storePath: store, token: 'w-token' });
    e2 = emitter.emit({ type: 'run.started' });
    await post(relay.url, 'w-token', [e2!]);
    await until(
      () => reconnected === 1 && out.text().includes(e2!.id),
      'reconnected and shows what was sent meanwhile',
    );
    assert.match(err.text(), 'watch: reconnected');
    // The same event again (an adapter re-claiming redelivers its last one): printed once.
    e3 = emitter.emit({ type: 'run.finished' });
    await post(relay.url, 'w-token', [e1!, e3!]);
    await until(() => out.text().includes(e3!.id), 'live again');
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as AepEvent).id);
    assert.equal(lines, [e1!.id, e2!.id, e3!.id]);
    stop.abort();
    assert.is(await watching, WATCH_EXIT.ok);
  } finally {
    stop.abort();
    await relay.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--history n shows the n most recent matching events first, then goes live', async () => {
  const emitter = new SessionEmitter({ agent: 'claude-code', session: `hist-${Date.now()}`, host: 'h' });
  const old = Array.from({ length: 5 }, (_, i) => emitter.emit({ type: 'run.started', run: `r${i}` }));
  await post(stack.relayUrl.replace(/^ws/, 'http').replace(/\/socket$/, ''), stack.token, old);
  const out = sink();
  let ready!: () => void;
  const live = new Promise<void>((r) => (ready = r));
  const watching = runWatch(
    { ...base(), session: old[0]!.session!, history: '2', limit: '3', json: true },
    { out: out.stream, err: sink().stream, onReady: ready },
  );
  await live;
  const next = emitter.emit({ type: 'run.finished' });
  await post(stack.relayUrl.replace(/^ws/, 'http').replace(/\/socket$/, ''), stack.token, [next]);
  assert.is(await watching, WATCH_EXIT.ok);
  assert.equal(
    out
      .text()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as AepEvent).id),
    [old[3]!.id, old[4]!.id, next.id],
  );
  assert.match((watchRequest({ history: '0' }) as { error: string }).error, '--history must be');
  assert.match((watchRequest({ history: '2', replay: true }) as { error: string }).error, 'give one');
});

test('a refused token exits 8, an unreachable relay 7', async () => {
  const err = sink();
  assert.is(
    await runWatch({ ...base(), token: 'nope' }, { out: sink().stream, err: err.stream }),
    WATCH_EXIT.unauthorized,
  );
  assert.match(err.text(), 'refused the token');
});

test('an unreachable relay exits 7', async () => {
  const err = sink();
  assert.is(
    await runWatch({ ...base(), relay: 'ws://127.0.0.1:1/socket' }, { out: sink().stream, err: err.stream }),
    WATCH_EXIT.unreachable,
  );
});

test.run();
