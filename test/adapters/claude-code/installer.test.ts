// The Claude Code installer on real files in a temp dir: merges, idempotence, uninstall keeping
// the user's own hooks, malformed settings refused untouched, and the per-install secret (D15).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLAUDE_CODE_EVENTS,
  installClaudeCode,
  isOurHook,
  settingsPath,
  uninstallClaudeCode,
} from '../../../src/adapters/claude-code/installer.js';
import { ensureSecret, readSecret, secretPath, shimPath } from '../../../src/adapters/install.js';

type Settings = {
  hooks?: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]>;
  [k: string]: unknown;
};

let dir = '';
const env = (): NodeJS.ProcessEnv => ({ HOME: join(dir, 'home'), AEP_STATE_DIR: join(dir, 'state') });
const base = () => ({
  port: 8377,
  secret: 's3cret-s3cret-s3cret',
  neutral: {},
  attentionTimeoutMs: 55_000,
  env: env(),
});
const read = (p: string): Settings => JSON.parse(readFileSync(p, 'utf8')) as Settings;

test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'aep-install-'));
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('settings path: project, user, and CLAUDE_CONFIG_DIR', () => {
  // D21: a project install goes to the file Claude Code keeps out of git.
  assert.is(settingsPath({ project: '/p' }, env()), '/p/.claude/settings.local.json');
  assert.is(settingsPath({ user: true }, env()), join(dir, 'home', '.claude', 'settings.json'));
  assert.is(settingsPath({}, { ...env(), CLAUDE_CONFIG_DIR: '/cfg' }), '/cfg/settings.json');
  assert.throws(() => settingsPath({ project: '/p', user: true }, env()), /not both/);
});

test('install writes the shim for every event: with the adapter stopped it fails silently, where an HTTP hook reports an error', () => {
  const r = installClaudeCode({ ...base(), project: join(dir, 'proj') });
  assert.ok(r.changed);
  const s = read(r.file);
  assert.equal(Object.keys(s.hooks!).sort(), [...CLAUDE_CODE_EVENTS].sort());
  for (const event of CLAUDE_CODE_EVENTS) {
    const [group] = s.hooks![event]!;
    const [hook] = group!.hooks;
    assert.is(hook!.type, 'command', event);
    assert.ok(String(hook!.command).startsWith(shimPath()), event);
    // The shim reads the secret from the state directory; its command line never holds it (D21).
    assert.ok(String(hook!.command).includes(`-k ${secretPath(env())} http://127.0.0.1:8377/hook/`), event);
    assert.not.ok(String(hook!.command).includes('s3cret'), event);
    assert.ok(String(hook!.command).endsWith(`'{}'`), 'the neutral reply is passed to the shim');
    assert.ok(isOurHook(hook), event);
  }
  assert.is(s.hooks!.PreToolUse![0]!.matcher, '*');
  assert.ok(Number(s.hooks!.PermissionRequest![0]!.hooks[0]!.timeout) > 55, 'held hooks outlive the attention timeout');
  assert.not.ok(
    'WorktreeCreate' in s.hooks!,
    "a WorktreeCreate hook would replace Claude Code's own worktree handling",
  );
});

test("install is idempotent and keeps the user's other hooks and settings", () => {
  const proj = join(dir, 'proj');
  mkdirSync(join(proj, '.claude'), { recursive: true });
  const mine = { type: 'command', command: 'echo mine' };
  writeFileSync(
    join(proj, '.claude', 'settings.local.json'),
    JSON.stringify({
      model: 'x',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }], Custom: [{ hooks: [mine] }] },
    }),
  );
  const first = installClaudeCode({ ...base(), project: proj });
  const afterFirst = readFileSync(first.file, 'utf8');
  const second = installClaudeCode({ ...base(), project: proj });
  assert.ok(first.changed);
  assert.not.ok(second.changed);
  assert.is(readFileSync(first.file, 'utf8'), afterFirst, 'a second install writes nothing');
  const s = read(first.file);
  assert.is(s.model, 'x');
  assert.equal(s.hooks!.Custom, [{ hooks: [mine] }]);
  assert.equal(s.hooks!.PreToolUse![0], { matcher: 'Bash', hooks: [mine] });
  assert.is(s.hooks!.PreToolUse!.length, 2);
});

test('a new port or secret replaces the old hook instead of adding a second', () => {
  const proj = join(dir, 'proj');
  installClaudeCode({ ...base(), project: proj });
  const r = installClaudeCode({ ...base(), project: proj, port: 9000 });
  assert.ok(r.changed);
  const s = read(r.file);
  assert.is(s.hooks!.PostToolUse!.length, 1);
  assert.match(String(s.hooks!.PostToolUse![0]!.hooks[0]!.command), 'http://127.0.0.1:9000/hook/');
});

test("uninstall removes only the adapter's hooks and leaves the rest byte-for-byte in meaning", () => {
  const proj = join(dir, 'proj');
  mkdirSync(join(proj, '.claude'), { recursive: true });
  const original = {
    permissions: { allow: ['Bash(ls)'] },
    hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'http', url: 'http://example.test/h' }] }] },
  };
  writeFileSync(join(proj, '.claude', 'settings.local.json'), JSON.stringify(original));
  installClaudeCode({ ...base(), project: proj });
  const r = uninstallClaudeCode({ project: proj, env: env() });
  assert.ok(r.changed);
  assert.is(r.removed.length, CLAUDE_CODE_EVENTS.length);
  assert.equal(read(r.file), original);
  assert.not.ok(uninstallClaudeCode({ project: proj, env: env() }).changed, 'a second uninstall changes nothing');
});

test("uninstall from a file with only the adapter's hooks drops the hooks key", () => {
  const proj = join(dir, 'proj');
  installClaudeCode({ ...base(), project: proj });
  const r = uninstallClaudeCode({ project: proj, env: env() });
  assert.equal(read(r.file), {});
});

test('malformed settings are refused and left untouched', () => {
  const proj = join(dir, 'proj');
  mkdirSync(join(proj, '.claude'), { recursive: true });
  const file = join(proj, '.claude', 'settings.local.json');
  for (const text of ['{ not json', '[1,2]', '{"hooks": 3}']) {
    writeFileSync(file, text);
    assert.throws(() => installClaudeCode({ ...base(), project: proj }), /nothing was changed/);
    assert.is(readFileSync(file, 'utf8'), text);
  }
});

test('D15: the secret is generated once, stored owner-only, and reused', () => {
  const a = ensureSecret(undefined, env());
  assert.ok(a.created);
  assert.match(a.secret, /^[A-Za-z0-9_-]{32}$/);
  const file = join(dir, 'state', 'secret');
  assert.ok(existsSync(file));
  assert.is(statSync(file).mode & 0o777, 0o600);
  const b = ensureSecret(undefined, env());
  assert.equal(b, { secret: a.secret, created: false });
  assert.is(readSecret(env()), a.secret);
});

test('D15: a given secret is checked and stored for the daemon', () => {
  assert.throws(() => ensureSecret('short', env()), /16 to 128/);
  assert.throws(() => ensureSecret('has/slash-in-it-xxxxxxxx', env()), /16 to 128/);
  const r = ensureSecret('given-secret-0123456789', env());
  assert.ok(r.created);
  assert.is(readSecret(env()), 'given-secret-0123456789');
  writeFileSync(join(dir, 'state', 'secret'), 'bad secret!\n');
  assert.throws(() => readSecret(env()), /malformed/);
});

test.run();
