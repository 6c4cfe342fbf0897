// VS Code cannot run here, so its steering loop is proven with design-record-derived hook inputs
// (the AEP mapping fixture's, taken from the pinned vendor source) against VS Code's exact reply
// shapes: each hook runs the very command the installer wrote into .github/hooks/, i.e. the real
// shim script, which posts over real HTTP to the real hook endpoint of a running adapter.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installVscode } from '../../src/adapters/installers/vscode.js';
import { surfaceFrom } from '../../src/adapters/table.js';
import { vscode } from '../../src/adapters/vscode.js';
import { command, type AepEvent } from '../../src/protocol/index.js';
import { adapter, SECRET, type TestAdapter } from '../support/adapter.js';
import { aepFile, readJson } from '../support/shared-dir.js';

type Input = Record<string, unknown>;
const fixture = readJson<{ hooks: Record<string, { input: Input }> }>(aepFile('fixtures', 'mappings', 'vscode.json'));
const base = Object.fromEntries(Object.entries(fixture.hooks).map(([k, v]) => [k, v.input]));
const SENDER = { agent: 'test-operator' };

let a: TestAdapter;
let root: string;
let hooks: Record<string, { command: string; timeout: number }[]>;

/** Runs the installed hook command for `event` the way VS Code does: JSON on stdin, reply on stdout. */
function runHook(event: string, input: Input): Promise<{ code: number | null; stdout: string }> {
  // The installed command, pointed at whichever adapter is `a` (the gate test runs its own).
  const cmd = hooks[event]![0]!.command.replace(`127.0.0.1:${installedPort}/`, `127.0.0.1:${a.handle.port}/`);
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
    child.stdin.end(JSON.stringify(input));
  });
}

const hookFor = (event: string, session: string, extra: Input = {}): Input => ({ ...base[event], session_id: session, ...extra });

/** Polls the recorded stream (an event may land before a subscription would start). */
async function seen(what: string, pred: (e: AepEvent) => boolean, limitMs = 20_000): Promise<AepEvent> {
  const until = Date.now() + limitMs;
  for (;;) {
    const e = a.events.find(pred);
    if (e !== undefined) return e;
    if (Date.now() > until) throw new Error(`never saw ${what}: ${a.events.map((x) => x.type).join(', ')}; errors: ${a.errors.map((x) => x.message).join('; ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function instruct(session: string, text: string) {
  const cmd = command(SENDER, session, { type: 'x.vscode.control.instruct', data: { text } });
  a.handle.command(cmd);
  const ack = await seen('the ack', (e) => e.cause === cmd.id && e.type.startsWith('control.'));
  assert.is(ack.type, 'control.accepted', JSON.stringify(ack.data));
  return cmd;
}

const deliveredFor = (id: string): AepEvent | undefined => a.events.find((e) => e.type === 'x.vscode.instruction.delivered' && e.cause === id);

let installedPort = 0;

test.before(async () => {
  a = await adapter({ surface: surfaceFrom(vscode), attentionTimeoutMs: 20_000 });
  installedPort = a.handle.port;
  root = mkdtempSync(join(tmpdir(), 'aep-vscode-'));
  const report = installVscode({ project: root, port: a.handle.port, secret: SECRET, neutral: vscode.replies.neutral, attentionTimeoutMs: vscode.attentionTimeoutMs });
  hooks = (JSON.parse(readFileSync(report.file, 'utf8')) as { hooks: typeof hooks }).hooks;
});

test.after(async () => {
  await a.handle.close();
  rmSync(root, { recursive: true, force: true });
});

test('each of the five moments delivers through the shim as hookSpecificOutput.additionalContext', async () => {
  const s = 'vsc-five';
  assert.equal(JSON.parse((await runHook('SessionStart', hookFor('SessionStart', s))).stdout), {}, 'nothing queued: neutral');
  for (const event of ['UserPromptSubmit', 'SubagentStart', 'PreToolUse', 'PostToolUse', 'SessionStart']) {
    const text = `STEER-VSC-${event} <kept as is>`;
    const cmd = await instruct(s, text);
    const out = await runHook(event, hookFor(event, s));
    assert.is(out.code, 0);
    assert.equal(JSON.parse(out.stdout), { hookSpecificOutput: { hookEventName: event, additionalContext: text } }, event);
    const d = await seen('delivered', (e) => e.type === 'x.vscode.instruction.delivered' && e.cause === cmd.id);
    assert.type((d.data as { queued_ms?: unknown }).queued_ms, 'number');
  }
});

test('PreCompact, Stop and SubagentStop leave the queue alone; no session end ever drops it', async () => {
  const s = 'vsc-idle';
  await runHook('SessionStart', hookFor('SessionStart', s));
  const cmd = await instruct(s, 'STEER-VSC-WAIT');
  for (const event of ['PreCompact', 'Stop', 'SubagentStop']) {
    const out = await runHook(event, hookFor(event, s));
    assert.equal(JSON.parse(out.stdout), {}, event);
  }
  assert.is(deliveredFor(cmd.id), undefined);
  assert.not.ok(a.events.some((e) => e.type === 'x.vscode.instruction.dropped' || (e.type === 'session.ended' && e.session === s)));
  const out = await runHook('UserPromptSubmit', hookFor('UserPromptSubmit', s));
  assert.is((JSON.parse(out.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext, 'STEER-VSC-WAIT');
});

test('a tool hook fired inside a subagent does not take the main session\'s queue', async () => {
  const s = 'vsc-sub';
  await runHook('SessionStart', hookFor('SessionStart', s));
  const cmd = await instruct(s, 'STEER-VSC-MAIN');
  assert.equal(JSON.parse((await runHook('PostToolUse', hookFor('PostToolUse', s, { agent_id: 'agent_7' }))).stdout), {});
  assert.is(deliveredFor(cmd.id), undefined);
});

test('the opt-in gate holds PreToolUse; the answer is the decision only, and steering waits for the next moment', async () => {
  // The gate is fixed when the surface is built (--control --gate-tools editFile): a second adapter.
  const main = a;
  a = await adapter({ surface: surfaceFrom(vscode, { control: true, gateTools: 'editFile' }), attentionTimeoutMs: 20_000 });
  const gated = a;
  try {
    const s = 'vsc-gate';
    await runHook('SessionStart', hookFor('SessionStart', s));
    const cmd = await instruct(s, 'STEER-VSC-AFTER-GATE');
    const held = runHook('PreToolUse', hookFor('PreToolUse', s));
    const requested = await seen('attention.requested', (e) => e.type === 'attention.requested' && e.session === s);
    assert.equal((requested.data as { options?: { id: string }[] }).options?.map((o) => o.id), ['allow', 'deny', 'ask']);
    a.handle.command(command(SENDER, s, { type: 'control.attention.respond', subject: requested.id, data: { answer: { text: 'Edit the test first.' } } }));
    const out = await held;
    assert.is(out.code, 0);
    assert.equal(JSON.parse(out.stdout), {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'Edit the test first.' },
    });
    assert.is(deliveredFor(cmd.id), undefined, 'the held reply carried no steering (D13)');
    // An ungated tool's PreToolUse is an ordinary eligible moment.
    const open = await runHook('PreToolUse', hookFor('PreToolUse', s, { tool_name: 'readFile' }));
    assert.equal(JSON.parse(open.stdout), { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'STEER-VSC-AFTER-GATE' } });
    assert.equal(gated.errors.map((e) => e.message), []);
  } finally {
    a = main;
    await gated.handle.close();
  }
});

test('D15: with the adapter unreachable the shim prints the neutral reply and exits 0', async () => {
  const cmd = hooks.UserPromptSubmit![0]!.command.replace(`127.0.0.1:${a.handle.port}/`, '127.0.0.1:9/');
  const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
    child.stdin.end(JSON.stringify(hookFor('UserPromptSubmit', 'vsc-down')));
  });
  assert.is(out.code, 0);
  assert.equal(JSON.parse(out.stdout), {});
});

test('the adapter reported no errors', () => {
  assert.equal(a.errors.map((e) => e.message), []);
});

test.run();
