// D34 on a real hook endpoint: a held PermissionRequest whose caller goes away (its socket closed,
// as Claude Code does on No or Esc) is dismissed at once; one whose call the vendor reports run
// (PostToolUse after a Yes in its dialog) is answered via oob; a later respond is refused
// not-pending and nothing is recorded as answered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { command, type AepEvent } from '../../src/protocol/index.js';
import { adapter, SECRET, type TestAdapter } from '../support/adapter.js';
import { openHook } from '../support/open-hook.js';

const SESSION = 'cc-held-1';
const toolInput = (n: number) => ({ command: `touch /tmp/held-${n}.txt`, description: `step ${n}` });
const hook = (event: string, extra: Record<string, unknown>) => ({
  session_id: SESSION,
  transcript_path: '/tmp/t.jsonl',
  cwd: '/tmp',
  prompt_id: 'p-1',
  permission_mode: 'default',
  hook_event_name: event,
  ...extra,
});
const permission = (n: number) =>
  hook('PermissionRequest', { tool_name: 'Bash', tool_input: toolInput(n), permission_suggestions: [] });

const openAt = (a: TestAdapter, body: unknown) => openHook(`http://127.0.0.1:${a.handle.port}/hook/${SECRET}`, body);

const respond = (subject: string, answer: Record<string, unknown>) =>
  command({ agent: 'op' }, SESSION, { type: 'control.attention.respond', subject, cause: subject, data: { answer } });

const ofType = (a: TestAdapter, type: string, subject?: string): AepEvent[] =>
  a.events.filter((e) => e.type === type && (subject === undefined || e.subject === subject));

test('a held hook whose socket the caller closes is dismissed at once; a later respond is refused not-pending', async () => {
  const a = await adapter({ surface: surfaceFrom(claudeCode), attentionTimeoutMs: 60_000 });
  try {
    await a.post(hook('SessionStart', { source: 'startup' }));
    const held = openAt(a, permission(1));
    const requested = await a.next((e) => e.type === 'attention.requested');
    const resolved = a.next((e) => e.type === 'attention.resolved' && e.subject === requested.id);
    held.abort();
    const r = await resolved;
    // D46: the caller closing its held hook is the person at the agent (Claude ends it on Esc).
    assert.equal(r.data, {
      resolution: 'dismissed',
      latency_ms: (r.data as { latency_ms: number }).latency_ms,
      decided_by: { identity: 'local-user', surface: 'agent' },
    });
    assert.is(r.cause, requested.id);
    assert.equal(a.handle.sessions()[0]!.holds, [], 'nothing is held any more');
    const late = respond(requested.id, { option: 'allow' });
    const nack = a.next((e) => e.cause === late.id);
    a.handle.command(late);
    const n = await nack;
    assert.is(n.type, 'control.rejected');
    assert.is((n.data as { reason: string }).reason, 'refused');
    assert.match((n.data as { detail: string }).detail, 'dismissed at the agent');
    assert.equal(ofType(a, 'attention.answered'), [], 'nothing is recorded as answered');
    const logged = readFileSync(a.logPath, 'utf8');
    assert.not.ok(logged.includes('"attention.answered"'), 'the log records no answer either');
  } finally {
    await a.handle.close();
  }
});

test('PostToolUse of the held call answers the request via oob; the held hook gets the neutral reply; a later respond is not-pending', async () => {
  const a = await adapter({ surface: surfaceFrom(claudeCode), attentionTimeoutMs: 60_000 });
  try {
    await a.post(hook('SessionStart', { source: 'startup' }));
    const held = openAt(a, permission(2));
    const requested = await a.next((e) => e.type === 'attention.requested');
    // D35: the request says what the tool will do, at capture redacted.
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, 'Bash: touch /tmp/held-2.txt');
    await a.post(
      hook('PostToolUse', {
        tool_name: 'Bash',
        tool_input: toolInput(2),
        tool_use_id: 'toolu_1',
        tool_response: { stdout: '' },
      }),
    );
    assert.is(await held.reply, '{}', 'the vendor no longer reads the held hook: it gets the neutral reply');
    const answered = ofType(a, 'attention.answered', requested.id);
    assert.is(answered.length, 1);
    assert.equal(answered[0]!.data, { answer: { option: 'allow' }, via: 'oob' });
    const resolved = ofType(a, 'attention.resolved', requested.id);
    assert.equal(
      resolved.map((e) => [e.cause, (e.data as { resolution: string }).resolution]),
      [[answered[0]!.id, 'answered']],
    );
    const late = respond(requested.id, { option: 'deny' });
    const nack = a.next((e) => e.cause === late.id);
    a.handle.command(late);
    assert.match(((await nack).data as { detail: string }).detail, 'already answered at the agent');
    assert.is(ofType(a, 'attention.answered').length, 1, 'the late deny is not recorded');
    // Another call's PostToolUse answers nothing.
    const other = openAt(a, permission(3));
    const second = await a.next((e) => e.type === 'attention.requested' && e.id !== requested.id);
    await a.post(
      hook('PostToolUse', {
        tool_name: 'Bash',
        tool_input: toolInput(4),
        tool_use_id: 'toolu_2',
        tool_response: { stdout: '' },
      }),
    );
    assert.equal(
      a.handle.sessions()[0]!.holds.map((h) => h.requestId),
      [second.id],
    );
    const allow = respond(second.id, { option: 'allow' });
    a.handle.command(allow);
    assert.match(await other.reply, '"behavior":"allow"');
  } finally {
    await a.handle.close();
  }
});

test.run();
