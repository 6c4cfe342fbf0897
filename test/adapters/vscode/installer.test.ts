// `aep-steer install vscode`: the adapter's own workspace hooks file under .github/hooks/, one shim
// hook per event of the VS Code hook target; uninstall removes that file and nothing else.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VSCODE_EVENTS, installVscode, uninstallVscode } from '../../../src/adapters/vscode/installer.js';

const SECRET = 'vscode-secret-0123456789';
let root = '';
const opts = () => ({ project: root, port: 18381, secret: SECRET, neutral: {}, attentionTimeoutMs: 25_000 });

test.before.each(() => {
  root = mkdtempSync(join(tmpdir(), 'aep-vscode-inst-'));
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

test('writes .github/hooks/aep-steer.json with the shim on all eight events', () => {
  const r = installVscode(opts());
  assert.is(r.file, join(root, '.github', 'hooks', 'aep-steer.json'));
  const { hooks } = JSON.parse(readFileSync(r.file, 'utf8')) as {
    hooks: Record<string, { type: string; command: string; timeout: number }[]>;
  };
  assert.equal(Object.keys(hooks).sort(), [...VSCODE_EVENTS].sort());
  for (const [event, [hook]] of Object.entries(hooks)) {
    assert.is(hook!.type, 'command', event);
    assert.match(hook!.command, /aep-steer-hook\.sh/);
    assert.match(hook!.command, /'\{\}'$/, 'the shim prints {} on failure');
  }
  assert.ok(hooks.PreToolUse![0]!.timeout <= 30, "within VS Code's 30 s hook timeout");
  assert.match(hooks.PreToolUse![0]!.command, / -t 27 /, 'the shim outlasts the 25 s hold');
  assert.ok(r.notes.some((n) => n.includes('AEP_VSCODE_CONTROL=1')));
  assert.is(installVscode(opts()).changed, false);
});

test("other hook files stay; uninstall removes only the adapter's file; --user is refused", () => {
  mkdirSync(join(root, '.github', 'hooks'), { recursive: true });
  writeFileSync(join(root, '.github', 'hooks', 'team.json'), '{"hooks":{}}');
  installVscode(opts());
  const u = uninstallVscode({ project: root });
  assert.is(u.changed, true);
  assert.equal(readdirSync(join(root, '.github', 'hooks')), ['team.json']);
  assert.not.ok(existsSync(u.file));
  try {
    installVscode({ ...opts(), user: true });
    assert.unreachable('must refuse');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'CONFIG_INVALID');
  }
});

test.run();
