// The demo on its scripted session (the path taken when the Claude Code CLI is not installed):
// a real relay and adapter in-process, ports picked by the OS, nothing left behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { DEMO_EXIT, runDemoCommand } from '../../src/cli/demo-command.js';
import { runDemo } from '../../src/demo/demo.js';
import { scriptedSession } from '../../src/demo/scripted-session.js';
import { sink } from '../cli/support.js';

const flags = { port: '0', relayPort: '0', text: 'Before you finish, say which tests you ran.', scripted: true };

async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

test('scripted demo: accepted, delivered into the hook reply, a drop at session end, a clean audit; exit 0', async () => {
  const out = sink();
  const err = sink();
  const code = await runDemoCommand(flags, { out: out.stream, err: err.stream });
  const text = out.text();
  assert.is(code, DEMO_EXIT.ok, text + err.text());
  assert.match(text, 'is live on the relay');
  assert.match(text, /✓ accepted \(ack \w+/);
  assert.match(text, /✓ delivered at PreToolUse after \d+ ms/);
  assert.match(
    text,
    'landed   in the PreToolUse hook reply: {"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"Before you finish, say which tests you ran."},"systemMessage":"aep-steer: 1 instruction from aep-steer-demo reached the agent (PreToolUse)"}',
  );
  assert.match(text, '✗ dropped: session-ended');
  assert.match(text, '2 instructions: 1 delivered, 1 dropped, 0 pending, 0 rejected; no violations');
});

test('the demo removes its working directory unless --keep', async () => {
  const r = await runDemo({ relayPort: 0, hookPort: 0, text: 'x', scripted: true, say: () => {} });
  assert.is(r.mode, 'scripted');
  assert.is(r.outcome.outcome, 'delivered');
  assert.not.ok(existsSync(r.dir));
});

test('a taken relay port or hook port is a clear message and exit 3', async () => {
  const busy = await occupy();
  try {
    const err = sink();
    assert.is(
      await runDemoCommand({ ...flags, relayPort: String(busy.port) }, { out: sink().stream, err: err.stream }),
      DEMO_EXIT.portInUse,
    );
    assert.match(err.text(), `relay port ${busy.port} on 127.0.0.1 is taken; move it with --relay-port`);
    const err2 = sink();
    assert.is(
      await runDemoCommand({ ...flags, port: String(busy.port) }, { out: sink().stream, err: err2.stream }),
      DEMO_EXIT.portInUse,
    );
    assert.match(err2.text(), `hook port ${busy.port} on 127.0.0.1 is taken; move it with --port`);
  } finally {
    busy.server.close();
  }
});

test('a bad port is a usage error', async () => {
  const err = sink();
  assert.is(
    await runDemoCommand({ ...flags, port: 'eighty' }, { out: sink().stream, err: err.stream }),
    DEMO_EXIT.usage,
  );
});

test("the scripted session follows Claude Code's hook order and fields", () => {
  const s = scriptedSession({ session: 'abc', cwd: '/home/dev/project', home: '/home/dev' });
  const all = [...s.opening, ...s.toolCall, ...s.closing];
  assert.equal(
    all.map((h) => h.hook_event_name),
    ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolBatch', 'Stop', 'SessionEnd'],
  );
  for (const h of all) {
    assert.is(h.session_id, 'abc');
    assert.is(h['transcript_path'], '/home/dev/.claude/projects/-home-dev-project/abc.jsonl');
    assert.is(h['cwd'], '/home/dev/project');
  }
  assert.is(s.toolCall[0]!['tool_use_id'], s.toolCall[1]!['tool_use_id']);
  assert.is(s.closing[0]!['stop_hook_active'], false);
});

test.run();
