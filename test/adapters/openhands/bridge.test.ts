// `aep-steer adapter openhands` observing the stand-in agent server over real sockets, into a real
// relay: a whole run's events map as the table says, the read-only posture writes nothing but the
// auth frame, reconnects resume without duplicates, and both event shapes (v1.36 without
// parent_id, v1.37 with it) give the same stream.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mapEvent } from '../../../src/adapters/openhands/map.js';
import { auditFiles } from '../../../src/audit/audit.js';
import { acceptsOf } from '../../../src/consumer/roster.js';
import type { AepEvent } from '../../../src/protocol/index.js';
import { RelayConsumer } from '../../../src/consumer/connection.js';
import { startOpenHandsStack, type OpenHandsStack } from '../../support/openhands-stack.js';
import { aepFile, projectRoot, readJson } from '../../support/shared-dir.js';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TASK = '[[TURN]] [[TOOLS:2]] list the files, then summarise';

/** A conversation the bridge has attached to (its full_state snapshot is on the relay). */
async function attached(
  stack: OpenHandsStack,
  opts: Parameters<OpenHandsStack['server']['create']>[0] = {},
): Promise<string> {
  const id = stack.server.create({ message: TASK, ...opts });
  await stack.waitFor((e) => e.session === id && e.type === 'state.snapshot');
  return id;
}

const shape = (e: AepEvent | { type: string; data?: unknown; subject?: string; step?: string }) => {
  const out: Record<string, unknown> = { type: e.type, data: e.data ?? {} };
  if (e.subject !== undefined) out.subject = e.subject;
  if (e.step !== undefined) out.step = e.step;
  return out;
};

async function wholeRun(parentIds: boolean): Promise<{ types: string[]; stack: OpenHandsStack; id: string }> {
  const stack = await startOpenHandsStack({ server: { parentIds } });
  const id = await attached(stack);
  stack.server.run(id);
  await stack.waitFor((e) => e.session === id && e.type === 'run.finished');
  const events = stack.session(id);
  // Every vendor event the server logged is on the relay exactly once, mapped as the table maps it.
  for (const v of stack.server.conversation(id)!.events) {
    assert.is(
      'parent_id' in v,
      v !== stack.server.conversation(id)!.events[0],
      'the server records lineage either way',
    );
    const mine = events.filter((e) => e.data?.vendor_event_id === v.id);
    assert.is(mine.length, 1, `${v.kind} ${v.id}`);
    const { parent_id: _p, ...stripped } = v;
    assert.equal(shape(mine[0]!), mapEvent(stripped).map(shape)[0], v.kind);
  }
  return { types: events.map((e) => e.type), stack, id };
}

test("a whole run maps to the fixture's events: tools requested and completed inside run.started … run.finished", async () => {
  const { types, stack, id } = await wholeRun(false);
  try {
    assert.equal(types, [
      'session.started',
      'state.snapshot',
      'x.openhands.system.prompt',
      'x.openhands.message.event',
      'state.delta',
      'run.started',
      'tool.requested',
      'tool.completed',
      'tool.requested',
      'tool.completed',
      'x.openhands.message.event',
      'state.delta',
      'run.finished',
    ]);
    const events = stack.session(id);
    const run = events.find((e) => e.type === 'run.started')!.run;
    assert.is(run, `run:${id}:1`);
    for (const e of events.filter((x) => x.type.startsWith('tool.'))) assert.is(e.run, run);
    const requested = events.filter((e) => e.type === 'tool.requested');
    assert.ok(
      requested.every((e) => typeof e.step === 'string' && e.step.startsWith('chatcmpl_mock_')),
      'step is the llm_response_id',
    );
    assert.equal(events.find((e) => e.type === 'session.started')!.data, {
      client: { name: 'openhands-agent-server' },
    });
    // Metadata posture: no command, output or message text anywhere on the stream.
    const text = JSON.stringify(events);
    for (const leaked of ['TOOL_RAN', 'list the files', 'MOCK_DONE', 'You are a software agent'])
      assert.not.ok(text.includes(leaked), leaked);
    assert.equal(stack.errors, []);
  } finally {
    await stack.stop();
  }
});

interface FixtureEntry {
  input: Record<string, unknown>;
  expected: { type: string; data?: Record<string, unknown>; subject?: string; step?: string } | null;
}
const fixture = readJson<{ events: Record<string, FixtureEntry>; fallback: FixtureEntry }>(
  aepFile('fixtures', 'mappings', 'openhands.json'),
);

const noDigest = (e: Record<string, unknown>) => {
  const data = { ...(e.data as Record<string, unknown>) };
  delete data.args_digest;
  return { ...e, data };
};

for (const parentIds of [false, true]) {
  test(`every fixture event sent over the socket${parentIds ? ' with parent_id (v1.37)' : ''} reaches the relay as the fixture's AEP event`, async () => {
    const stack = await startOpenHandsStack({ server: { parentIds } });
    try {
      const id = await attached(stack);
      const entries = [...Object.entries(fixture.events), ['fallback', fixture.fallback] as const];
      for (const [, entry] of entries) stack.server.emit(id, entry.input as { kind: string; source: string });
      const lastMapped = entries.filter(([, e]) => e.expected !== null).at(-1)![1];
      await stack.waitFor((e) => e.session === id && e.data?.vendor_event_id === lastMapped.input.id);
      const events = stack.session(id);
      for (const [name, entry] of entries) {
        const mine = events.filter((e) => e.data?.vendor_event_id === entry.input.id);
        if (entry.expected === null) {
          assert.equal(mine, [], name);
          continue;
        }
        assert.is(mine.length, 1, name);
        assert.equal(noDigest(shape(mine[0]!)), noDigest(shape(entry.expected)), name);
      }
    } finally {
      await stack.stop();
    }
  });
}

test("v1.37 events carrying parent_id give the same stream as v1.36's stripped ones", async () => {
  const a = await wholeRun(false);
  await a.stack.stop();
  const b = await wholeRun(true);
  await b.stack.stop();
  assert.equal(b.types, a.types);
});

test('read-only by default: the bridge writes nothing but the auth frame, and hello declares no control', async () => {
  const stack = await startOpenHandsStack();
  try {
    const id = await attached(stack, { confirmation: true });
    stack.server.run(id);
    await stack.waitFor((e) => e.session === id && e.type === 'attention.requested');
    const wrote = stack.server.requests.filter(
      (r) => (r.transport === 'http' && r.method !== 'GET') || r.transport === 'ws-frame',
    );
    assert.ok(wrote.length >= 1);
    for (const r of wrote)
      assert.equal(r.body, { type: 'auth', session_api_key: '[key]' }, `${r.transport} ${r.method} ${r.path}`);
    const reads = stack.server.requests.filter((r) => r.transport === 'http');
    assert.ok(reads.every((r) => r.method === 'GET' && r.path === '/api/conversations/search' && r.keyHeader));
    const upgrades = stack.server.requests.filter((r) => r.transport === 'ws-upgrade');
    assert.ok(
      upgrades.every((u) => u.query.resend_mode === 'all' && !('session_api_key' in u.query) && !u.keyHeader),
      'the key never rides in the URL',
    );
    // The read-only attention request: no options, no respond path.
    const att = await stack.waitFor((e) => e.session === id && e.type === 'attention.requested');
    assert.equal(att.data, { kind: 'permission', prompt: 'Awaiting confirmation for a pending action' });
    const consumer = await RelayConsumer.connect({
      url: stack.relay.socketUrl,
      token: stack.token,
      agent: 'roster-reader',
    });
    try {
      const entry = (await consumer.roster()).find((r) => r.session === id);
      assert.ok(entry, 'the bridge claims the conversation');
      assert.equal(acceptsOf(entry), [], 'control: { accepts: [] }');
    } finally {
      await consumer.close();
    }
  } finally {
    await stack.stop();
  }
});

test('a dropped socket reconnects with resend_mode=since and adds no duplicates', async () => {
  const stack = await startOpenHandsStack();
  try {
    const id = await attached(stack);
    const before = stack.session(id).length;
    stack.server.dropSockets();
    stack.server.run(id);
    await stack.server.until(id, 'finished');
    // The last event the server logged arrives through the `since` resend.
    const last = stack.server.conversation(id)!.events.at(-1)!;
    await stack.waitFor((e) => e.session === id && e.data?.vendor_event_id === last.id);
    const since = stack.server.requests.filter((r) => r.transport === 'ws-upgrade' && r.query.resend_mode === 'since');
    assert.ok(since.length >= 1, 'reconnected since the last vendor timestamp');
    assert.ok(
      typeof since[0]!.query.after_timestamp === 'string' &&
        /^\d{4}-\d\d-\d\dT[\d:.]+$/.test(since[0]!.query.after_timestamp),
    );
    const ids = stack
      .session(id)
      .map((e) => e.data?.vendor_event_id)
      .filter((v) => v !== undefined);
    assert.is(new Set(ids).size, ids.length, 'every vendor event once');
    assert.ok(stack.session(id).length > before);
  } finally {
    await stack.stop();
  }
});

test('a restarted bridge resumes from its log: no event twice, no second session.started, the run count goes on', async () => {
  const { stack, id } = await wholeRun(false);
  try {
    const before = stack.session(id);
    await stack.restartBridge();
    const upgrades = () =>
      stack.server.requests.filter((r) => r.transport === 'ws-upgrade' && r.path === `/sockets/events/${id}`);
    const attachedBefore = upgrades().length;
    // The new bridge attaches (since the last vendor time) and shows the current state.
    const snapshots = before.filter((e) => e.type === 'state.snapshot').length;
    await stack.waitFor(() => stack.session(id).filter((e) => e.type === 'state.snapshot').length > snapshots);
    assert.ok(upgrades().length > attachedBefore);
    assert.is(upgrades().at(-1)!.query.resend_mode, 'since');
    // Redeliveries of logged events (same id, to re-claim the session) are not new events.
    const known = new Set(before.map((e) => e.id));
    const after = stack
      .session(id)
      .slice(before.length)
      .filter((e) => {
        if (known.has(e.id)) return false;
        known.add(e.id);
        return true;
      });
    assert.equal(
      after.map((e) => e.type),
      ['state.snapshot'],
      'only the fresh full_state',
    );
    stack.server.send(id, '[[TURN]] [[TOOLS:1]] once more', true);
    const started = await stack.waitFor((e) => e.session === id && e.type === 'run.started' && e.run !== `run:${id}:1`);
    assert.is(started.run, `run:${id}:2`);
    await stack.waitFor((e) => e.session === id && e.type === 'run.finished' && e.run === `run:${id}:2`);
    assert.is(stack.session(id).filter((e) => e.type === 'session.started').length, 1);
    assert.equal((await auditFiles([stack.logPath])).violations, []);
  } finally {
    await stack.stop();
  }
});

test('statuses close runs as the table says: error fails the run, deleting cancels it and ends the session', async () => {
  const stack = await startOpenHandsStack();
  try {
    const id = await attached(stack);
    stack.server.setStatus(id, 'running');
    await stack.waitFor((e) => e.session === id && e.type === 'run.started');
    stack.server.emit(id, {
      kind: 'ConversationErrorEvent',
      source: 'environment',
      code: 'LLMAuthenticationError',
      detail: 'Provider rejected the API key.',
    });
    stack.server.setStatus(id, 'error');
    const failed = await stack.waitFor((e) => e.session === id && e.type === 'run.failed');
    assert.equal(failed.data, { reason: 'error' });
    const raised = stack.session(id).find((e) => e.type === 'error.raised')!;
    assert.is(raised.data?.code, 'LLMAuthenticationError');
    assert.not.ok(JSON.stringify(raised).includes('Provider rejected'));
    stack.server.setStatus(id, 'running');
    await stack.waitFor((e) => e.session === id && e.type === 'run.started' && e.run === `run:${id}:2`);
    stack.server.setStatus(id, 'deleting');
    const ended = await stack.waitFor((e) => e.session === id && e.type === 'session.ended');
    assert.equal(ended.data, { reason: 'killed' });
    const tail = stack
      .session(id)
      .slice(-3)
      .map((e) => [e.type, e.data?.reason]);
    assert.equal(tail, [
      ['state.delta', undefined],
      ['run.cancelled', 'deleting'],
      ['session.ended', 'killed'],
    ]);
  } finally {
    await stack.stop();
  }
});

test("the run's stream passes aep-steer audit: the bridge's log and the relay's copy", async () => {
  const { stack, id } = await wholeRun(false);
  try {
    const r = await auditFiles([stack.logPath]);
    assert.equal(r.violations, []);
    assert.ok(r.events >= stack.session(id).length);
    assert.ok(!r.notes.some((n) => n.kind === 'machine-skipped'), 'replayed through the session machine');
    const exportPath = join(stack.dir, 'relay-export.jsonl');
    writeFileSync(
      exportPath,
      `${stack
        .session(id)
        .map((e) => JSON.stringify(e))
        .join('\n')}\n`,
    );
    for (const files of [[exportPath], [stack.logPath, exportPath]])
      assert.equal((await auditFiles(files)).violations, [], files.join(' + '));
    // The command itself, as a user runs it.
    const cli = spawnSync(
      process.execPath,
      [join(projectRoot, 'bin', 'aep-steer.js'), 'audit', stack.logPath, exportPath],
      { encoding: 'utf8' },
    );
    assert.is(cli.status, 0, cli.stdout + cli.stderr);
  } finally {
    await stack.stop();
  }
});

test.run();
