// Hermes cannot run here, so its steering loop is proven with design-record-derived hook inputs
// (the AEP mapping fixture's stdin envelopes, taken from the pinned vendor source) against Hermes's
// exact reply shapes: each hook runs the very command the installer wrote into config.yaml, i.e.
// the real shim script, which posts over real HTTP to the real hook endpoint of a running adapter.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hermes } from '../../../src/adapters/hermes/table.js';
import { installHermes } from '../../../src/adapters/hermes/installer.js';
import { writeSecret } from '../../../src/adapters/install.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { command, type AepEvent } from '../../../src/protocol/index.js';
import { adapter, SECRET, type TestAdapter } from '../../support/adapter.js';
import { fixtureInputs } from '../../support/mapping-fixture.js';
import { instructOn, runHookCommand, seenOn, SENDER, type Input } from '../../support/shim-hooks.js';

const base = fixtureInputs('hermes');

let a: TestAdapter;
let home: string;
const commands: Record<string, string> = {};

/** Reads back the entries the installer wrote: one flow mapping (JSON) per line under its event key. */
function installedCommands(yaml: string): Record<string, string> {
  const out: Record<string, string> = {};
  let event = '';
  for (const line of yaml.split('\n')) {
    const key = /^ {2}([a-z_]+):/.exec(line);
    if (key) event = key[1]!;
    const entry = /^\s+- (\{.*\})\s+# aep-steer$/.exec(line);
    if (entry) out[event] = (JSON.parse(entry[1]!) as { command: string }).command;
  }
  return out;
}

function runHook(event: string, input: Input): Promise<{ code: number | null; stdout: string }> {
  // The installed command, pointed at whichever adapter is `a` (the gate test runs its own).
  const cmd = commands[event]!.replace(`127.0.0.1:${installedPort}/`, `127.0.0.1:${a.handle.port}/`);
  return runHookCommand(cmd, input);
}

const hookFor = (name: string, session: string): Input => ({ ...base[name], session_id: session });

const seen = (what: string, pred: (e: AepEvent) => boolean): Promise<AepEvent> => seenOn(a, what, pred);
const instruct = (session: string, text: string) => instructOn(a, 'hermes', session, text);

const of = (type: string, cause: string) => a.events.find((e) => e.type === type && e.cause === cause);

let installedPort = 0;

test.before(async () => {
  a = await adapter({ surface: surfaceFrom(hermes), attentionTimeoutMs: 20_000 });
  installedPort = a.handle.port;
  home = mkdtempSync(join(tmpdir(), 'aep-hermes-'));
  // The shim reads the secret from the state directory (D21), where the adapter stored it.
  const env = { HERMES_HOME: home, AEP_STATE_DIR: join(home, 'state') };
  writeSecret(SECRET, env);
  const report = installHermes({
    user: true,
    port: a.handle.port,
    secret: SECRET,
    neutral: hermes.replies.neutral,
    attentionTimeoutMs: hermes.attentionTimeoutMs,
    env,
  });
  Object.assign(commands, installedCommands(readFileSync(report.file, 'utf8')));
});

test.after(async () => {
  await a.handle.close();
  rmSync(home, { recursive: true, force: true });
});

test('the installer wired all twelve events to the shim', () => {
  assert.is(Object.keys(commands).length, 12);
  assert.ok(Object.values(commands).every((c) => c.includes('aep-steer-hook.sh')));
});

test('only pre_llm_call delivers, as {"context": text}; tool hooks and per-turn ends leave the queue', async () => {
  const s = 'hermes-llm';
  assert.equal(JSON.parse((await runHook('on_session_start', hookFor('on_session_start', s))).stdout), {});
  const cmd = await instruct(s, 'STEER-HERMES <as is> "quoted"');
  for (const name of ['pre_tool_call', 'post_tool_call_ok', 'on_session_end_completed']) {
    const event = String(base[name]!.hook_event_name);
    const out = await runHook(event, hookFor(name, s));
    assert.is(out.code, 0);
    assert.equal(JSON.parse(out.stdout), {}, name);
  }
  assert.is(of('x.hermes.instruction.delivered', cmd.id), undefined);
  const out = await runHook('pre_llm_call', hookFor('pre_llm_call', s));
  assert.equal(JSON.parse(out.stdout), { context: 'STEER-HERMES <as is> "quoted"' });
  const d = await seen('delivered', (e) => e.type === 'x.hermes.instruction.delivered' && e.cause === cmd.id);
  assert.type((d.data as { queued_ms?: unknown }).queued_ms, 'number');
});

test('D10: on_session_finalize drops what is still queued, then the session ends', async () => {
  const s = 'hermes-final';
  await runHook('on_session_start', hookFor('on_session_start', s));
  const cmd = await instruct(s, 'STEER-HERMES-LATE');
  assert.equal(JSON.parse((await runHook('on_session_finalize', hookFor('on_session_finalize', s))).stdout), {});
  const ended = await seen('session.ended', (e) => e.type === 'session.ended' && e.session === s);
  const dropped = of('x.hermes.instruction.dropped', cmd.id);
  assert.ok(dropped);
  assert.equal(dropped!.data, { reason: 'session-ended' });
  assert.ok(dropped!.seq! < ended.seq!);
});

test("the opt-in gate holds pre_tool_call; a deny answer is a block with the operator's words, never steering", async () => {
  // The gate is fixed when the surface is built (--control --gate-tools terminal): a second adapter.
  const main = a;
  a = await adapter({
    surface: surfaceFrom(hermes, { control: true, gateTools: 'terminal' }),
    attentionTimeoutMs: 20_000,
  });
  const gated = a;
  try {
    const s = 'hermes-gate';
    await runHook('on_session_start', hookFor('on_session_start', s));
    const cmd = await instruct(s, 'STEER-HERMES-AFTER-GATE');
    const held = runHook('pre_tool_call', hookFor('pre_tool_call', s));
    const requested = await seen('attention.requested', (e) => e.type === 'attention.requested' && e.session === s);
    a.handle.command(
      command(SENDER, s, {
        type: 'control.attention.respond',
        subject: requested.id,
        data: { answer: { text: 'Not on the main branch.' } },
      }),
    );
    const out = await held;
    assert.is(out.code, 0);
    assert.equal(JSON.parse(out.stdout), { action: 'block', message: 'Not on the main branch.' });
    assert.is(of('x.hermes.instruction.delivered', cmd.id), undefined);
    assert.equal(JSON.parse((await runHook('pre_llm_call', hookFor('pre_llm_call', s))).stdout), {
      context: 'STEER-HERMES-AFTER-GATE',
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

test('D15: with the adapter unreachable the shim prints {} and exits 0', async () => {
  const cmd = commands.pre_llm_call!.replace(`127.0.0.1:${a.handle.port}/`, '127.0.0.1:9/');
  const out = await runHookCommand(cmd, hookFor('pre_llm_call', 'hermes-down'), 'ignore');
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
