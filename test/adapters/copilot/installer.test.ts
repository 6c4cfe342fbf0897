// `aep-steer install copilot` as data on disk: one repository hook file of the adapter's own, a
// command per event that names the event before the shim posts it, the folder-trust note and the
// doctor check (trusted by config.json's trustedFolders or COPILOT_ALLOW_ALL, else the fix).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COPILOT_EVENTS, copilotInstaller, eventCommand } from '../../../src/adapters/copilot/installer.js';
import { copilot } from '../../../src/adapters/copilot/table.js';

let root = '';
let project = '';
const env = () => ({ HOME: root, AEP_STATE_DIR: join(root, 'state') });
const opts = () => ({
  project,
  port: 18395,
  secret: 'copilot-secret-0123456789',
  neutral: {},
  attentionTimeoutMs: 55_000,
  env: env(),
});

test.before.each(() => {
  root = mkdtempSync(join(tmpdir(), 'aep-copilot-inst-'));
  project = join(root, 'proj');
  mkdirSync(project);
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

test('writes .github/hooks/aep-steer.json with a command hook per event, mode 600, no secret in it', () => {
  const r = copilotInstaller.install(opts());
  assert.is(r.file, join(project, '.github', 'hooks', 'aep-steer.json'));
  assert.is(statSync(r.file).mode & 0o777, 0o600);
  const text = readFileSync(r.file, 'utf8');
  assert.not.ok(text.includes('copilot-secret'), 'the shim reads the secret from the state directory');
  const file = JSON.parse(text) as {
    version: number;
    hooks: Record<string, { type: string; bash: string; timeoutSec: number }[]>;
  };
  assert.is(file.version, 1);
  assert.equal(Object.keys(file.hooks).sort(), [...COPILOT_EVENTS].sort());
  for (const e of COPILOT_EVENTS) {
    const [h] = file.hooks[e]!;
    assert.is(h!.type, 'command');
    assert.ok(h!.bash.includes('aep-steer-hook.sh'), e);
  }
  // A held permission waits longer than the attention timeout (D14).
  assert.ok(file.hooks.permissionRequest![0]!.timeoutSec > 55);
  assert.is(copilotInstaller.install(opts()).changed, false, 'a second install changes nothing');
});

test("the hook command puts the event's name into Copilot's input, which names none", () => {
  const input = '{"sessionId":"s-1","timestamp":1,"cwd":"/p","toolName":"bash"}';
  const out = execFileSync('sh', ['-c', eventCommand('preToolUse', 'cat')], { input }).toString();
  const parsed = JSON.parse(out) as Record<string, unknown>;
  assert.is(parsed.hook_event_name, 'preToolUse');
  assert.equal(copilot.identify(parsed), { session: 's-1', event: 'preToolUse' });
});

test('an untrusted folder: install says the hooks will not fire, and the doctor check fails with the fix', () => {
  const r = copilotInstaller.install(opts());
  assert.ok(
    r.notes.some((n) => n.includes('will not fire') && n.includes('trustedFolders')),
    r.notes.join('\n'),
  );
  const [check] = copilotInstaller.checks!({ project }, env());
  assert.is(check!.ok, false);
  assert.match(check!.fix!, /--trust-folder|trustedFolders/);
});

test("a folder in config.json's trustedFolders (after its comment lines), or COPILOT_ALLOW_ALL, passes", () => {
  mkdirSync(join(root, '.copilot'));
  writeFileSync(
    join(root, '.copilot', 'config.json'),
    `// User settings belong in settings.json.\n{\n  "trustedFolders": [${JSON.stringify(project)}]\n}\n`,
  );
  assert.is(copilotInstaller.checks!({ project }, env())[0]!.ok, true);
  rmSync(join(root, '.copilot'), { recursive: true });
  assert.is(copilotInstaller.checks!({ project }, { ...env(), COPILOT_ALLOW_ALL: 'true' })[0]!.ok, true);
});

test('uninstall removes only its own file; --user is refused with what to do', () => {
  const other = join(project, '.github', 'hooks', 'mine.json');
  copilotInstaller.install(opts());
  writeFileSync(other, '{"version":1,"hooks":{}}');
  const r = copilotInstaller.uninstall({ project, env: env() });
  assert.ok(r.changed);
  assert.not.ok(existsSync(r.file));
  assert.ok(existsSync(other));
  assert.throws(() => copilotInstaller.install({ ...opts(), user: true }), /--project DIR/);
});

test.run();
