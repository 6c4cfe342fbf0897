// `aep-steer install cline`: ten executable hook files that run the real shim, with the secret
// read from the state directory when they run (never written into them), failing open when the
// adapter is down, and removed again without touching anyone else's hooks.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cline } from '../../../src/adapters/cline/table.js';
import { writeSecret } from '../../../src/adapters/install.js';
import { CLINE_EVENTS, clineHooksDir, installCline, uninstallCline } from '../../../src/adapters/cline/installer.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { adapter, SECRET } from '../../support/adapter.js';
import { readJson, referenceFile } from '../../support/shared-dir.js';
import { instructOn, runHookCommand, seenOn } from '../../support/shim-hooks.js';

const samples = readJson<Record<string, Record<string, unknown>>>(referenceFile('samples', 'cline-3.0.65.json'));

function fresh() {
  const root = mkdtempSync(join(tmpdir(), 'aep-cline-install-'));
  const env = { CLINE_DIR: join(root, '.cline'), AEP_STATE_DIR: join(root, 'state'), HOME: root };
  return { root, env };
}

const opts = (env: NodeJS.ProcessEnv, port: number, extra: Record<string, unknown> = {}) => ({
  user: true,
  port,
  secret: SECRET,
  neutral: cline.replies.neutral,
  attentionTimeoutMs: 55_000,
  env,
  ...extra,
});

test('install writes the ten hook files into $CLINE_DIR/hooks, executable, running the shim, with no secret inside; --project uses .clinerules/hooks', () => {
  const { root, env } = fresh();
  try {
    const r = installCline(opts(env, 8392));
    assert.is(r.file, join(env.CLINE_DIR, 'hooks'));
    assert.equal(r.added, [...CLINE_EVENTS]);
    for (const event of CLINE_EVENTS) {
      const file = join(env.CLINE_DIR, 'hooks', event);
      assert.is(statSync(file).mode & 0o111, 0o111, `${event} is executable`);
      const text = readFileSync(file, 'utf8');
      assert.match(text, 'aep-steer-hook.sh');
      assert.match(text, join(env.AEP_STATE_DIR, 'secret'));
      assert.not.ok(text.includes(SECRET), 'the secret is never written into a hook file (D21)');
    }
    assert.is(installCline(opts(env, 8392)).changed, false, 'a second install changes nothing');
    assert.is(clineHooksDir({ project: join(root, 'proj') }), join(root, 'proj', '.clinerules', 'hooks'));
    assert.throws(() => clineHooksDir({ project: root, user: true }), /--project DIR or --user/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("someone else's hook file is left alone, by install and uninstall; uninstall removes only ours", () => {
  const { root, env } = fresh();
  try {
    const dir = join(env.CLINE_DIR, 'hooks');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'TaskStart'), '#!/bin/sh\necho mine\n', { mode: 0o755 });
    const r = installCline(opts(env, 8392));
    assert.not.ok(r.added.includes('TaskStart'));
    assert.ok(r.notes.some((n) => n.includes('TaskStart') && n.includes('not ours')));
    const u = uninstallCline({ user: true, env });
    assert.is(u.removed.length, 9);
    assert.is(readFileSync(join(dir, 'TaskStart'), 'utf8'), '#!/bin/sh\necho mine\n');
    assert.not.ok(existsSync(join(dir, 'PreToolUse')));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the installed PreToolUse file posts the recorded hook to the adapter and prints {"contextModification": …}; with the adapter down it prints {} and exits 0', async () => {
  const { root, env } = fresh();
  const a = await adapter({ surface: surfaceFrom(cline) });
  try {
    writeSecret(SECRET, env);
    installCline(opts(env, a.handle.port));
    const hook = (event: string) => join(env.CLINE_DIR, 'hooks', event);
    const start = await runHookCommand(hook('TaskStart'), samples.TaskStart!);
    assert.equal([start.code, JSON.parse(start.stdout)], [0, {}]);
    const session = '1796031198925_w9dwf';
    await seenOn(a, 'run.started', (e) => e.session === session && e.type === 'run.started');
    const cmd = await instructOn(a, 'cline', session, 'STEER-FROM-FILE');
    const pre = await runHookCommand(hook('PreToolUse'), samples.PreToolUse!);
    assert.equal([pre.code, JSON.parse(pre.stdout)], [0, { contextModification: 'STEER-FROM-FILE' }]);
    await seenOn(a, 'delivered', (e) => e.type === 'x.cline.instruction.delivered' && e.cause === cmd.id);
    // Cline names no run: TaskStart mints one, and the turn's tool events carry it.
    const run = a.events.find((e) => e.type === 'run.started')!.run;
    assert.match(String(run), /^run_/);
    assert.is(a.events.find((e) => e.type === 'tool.requested')!.run, run);
    await a.handle.close();
    const down = await runHookCommand(hook('PostToolUse'), samples.PostToolUse!);
    assert.equal([down.code, JSON.parse(down.stdout)], [0, {}], 'fails open (D15)');
  } finally {
    await a.handle.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
