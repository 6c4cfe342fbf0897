// VS Code cannot run here, so its steering loop is proven with design-record-derived hook inputs
// (the AEP mapping fixture's, taken from the pinned vendor source) against VS Code's exact reply
// shapes: each hook runs the very command the installer wrote into .github/hooks/, i.e. the real
// shim script, which posts over real HTTP to the real hook endpoint of a running adapter.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installVscode } from '../../../src/adapters/vscode/installer.js';
import { writeSecret } from '../../../src/adapters/install.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { vscode } from '../../../src/adapters/vscode/table.js';
import { command, type AepEvent } from '../../../src/protocol/index.js';
import { adapter, SECRET, type TestAdapter } from '../../support/adapter.js';
import { fixtureInputs } from '../../support/mapping-fixture.js';
import { instructOn, runHookCommand, seenOn, SENDER, type Input } from '../../support/shim-hooks.js';

const base = fixtureInputs('vscode');

let a: TestAdapter;
let root: string;
let hooks: Record<string, { command: string; timeout: number }[]>;

/** Runs the installed hook command for `event` the way VS Code does: JSON on stdin, reply on stdout. */
function runHook(event: string, input: Input): Promise<{ code: number | null; stdout: string }> {
  // The installed command, pointed at whichever adapter is `a` (the gate test runs its own).
  const cmd = hooks[event]![0]!.command.replace(`127.0.0.1:${installedPort}/`, `127.0.0.1:${a.handle.port}/`);
  return runHookCommand(cmd, input);
}

const hookFor = (event: string, session: string, extra: Input = {}): Input => ({
  ...base[event],
  session_id: session,
  ...extra,
});

/** Polls the recorded stream (an event may land before a subscription would start). */
const seen = (what: string, pred: (e: AepEvent) => boolean): Promise<AepEvent> => seenOn(a, what, pred);
const instruct = (session: string, text: string) => instructOn(a, 'vscode', session, text);

const deliveredFor = (id: string): AepEvent | undefined =>
  a.events.find((e) => e.type === 'x.vscode.instruction.delivered' && e.cause === id);

let installedPort = 0;

test.before(async () => {
  a = await adapter({ surface: surfaceFrom(vscode), attentionTimeoutMs: 20_000 });
  installedPort = a.handle.port;
  root = mkdtempSync(join(tmpdir(), 'aep-vscode-'));
  // The shim reads the secret from the state directory (D21), where the adapter stored it.
  const env = { AEP_STATE_DIR: join(root, 'state') };
  writeSecret(SECRET, env);
  const report = installVscode({
    project: root,
    port: a.handle.port,
    secret: SECRET,
    neutral: vscode.replies.neutral,
    attentionTimeoutMs: vscode.attentionTimeoutMs,
    env,
  });
  hooks = (JSON.parse(readFileSync(report.file, 'utf8')) as { hooks: typeof hooks }).hooks;
});

test.after(async () => {
  await a.handle.close();
  rmSync(root, { recursive: true, force: true });
});

test('each of the five moments delivers through the shim as hookSpecificOutput.additionalContext', async () => {
  const s = 'vsc-five';
  assert.equal(
    JSON.parse((await runHook('SessionStart', hookFor('SessionStart', s))).stdout),
    {},
    'nothing queued: neutral',
  );
  for (const event of ['UserPromptSubmit', 'SubagentStart', 'PreToolUse', 'PostToolUse', 'SessionStart']) {
    const text = `STEER-VSC-${event} <kept as is>`;
    const cmd = await instruct(s, text);
    const out = await runHook(event, hookFor(event, s));
    assert.is(out.code, 0);
    assert.equal(
      JSON.parse(out.stdout),
      { hookSpecificOutput: { hookEventName: event, additionalContext: text } },
      event,
    );
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
  assert.not.ok(
    a.events.some((e) => e.type === 'x.vscode.instruction.dropped' || (e.type === 'session.ended' && e.session === s)),
  );
  const out = await runHook('UserPromptSubmit', hookFor('UserPromptSubmit', s));
  assert.is(
    (JSON.parse(out.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
      .additionalContext,
    'STEER-VSC-WAIT',
  );
});

test("a tool hook fired inside a subagent does not take the main session's queue", async () => {
  const s = 'vsc-sub';
  await runHook('SessionStart', hookFor('SessionStart', s));
  const cmd = await instruct(s, 'STEER-VSC-MAIN');
  assert.equal(
    JSON.parse((await runHook('PostToolUse', hookFor('PostToolUse', s, { agent_id: 'agent_7' }))).stdout),
    {},
  );
  assert.is(deliveredFor(cmd.id), undefined);
});

test('the opt-in gate holds PreToolUse; the answer is the decision only, and steering waits for the next moment', async () => {
  // The gate is fixed when the surface is built (--control --gate-tools editFile): a second adapter.
  const main = a;
  a = await adapter({
    surface: surfaceFrom(vscode, { control: true, gateTools: 'editFile' }),
    attentionTimeoutMs: 20_000,
  });
  const gated = a;
  try {
    const s = 'vsc-gate';
    await runHook('SessionStart', hookFor('SessionStart', s));
    const cmd = await instruct(s, 'STEER-VSC-AFTER-GATE');
    const held = runHook('PreToolUse', hookFor('PreToolUse', s));
    const requested = await seen('attention.requested', (e) => e.type === 'attention.requested' && e.session === s);
    assert.equal(
      (requested.data as { options?: { id: string }[] }).options?.map((o) => o.id),
      ['allow', 'deny', 'ask'],
    );
    a.handle.command(
      command(SENDER, s, {
        type: 'control.attention.respond',
        subject: requested.id,
        data: { answer: { text: 'Edit the test first.' } },
      }),
    );
    const out = await held;
    assert.is(out.code, 0);
    assert.equal(JSON.parse(out.stdout), {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Edit the test first.',
      },
    });
    assert.is(deliveredFor(cmd.id), undefined, 'the held reply carried no steering (D13)');
    // An ungated tool's PreToolUse is an ordinary eligible moment.
    const open = await runHook('PreToolUse', hookFor('PreToolUse', s, { tool_name: 'readFile' }));
    assert.equal(JSON.parse(open.stdout), {
      hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'STEER-VSC-AFTER-GATE' },
    });
    assert.equal(
      gated.errors.map((e) => e.message),
      [],
    );
  } finally {
    a = main;
    await gated.handle.close();
  }
});

test('D15: with the adapter unreachable the shim prints the neutral reply and exits 0', async () => {
  const cmd = hooks.UserPromptSubmit![0]!.command.replace(`127.0.0.1:${a.handle.port}/`, '127.0.0.1:9/');
  const out = await runHookCommand(cmd, hookFor('UserPromptSubmit', 'vsc-down'), 'ignore');
  assert.is(out.code, 0);
  assert.equal(JSON.parse(out.stdout), {});
});

test('the adapter reported no errors', () => {
  assert.equal(
    a.errors.map((e) => e.message),
    [],
  );
});

test.run();
