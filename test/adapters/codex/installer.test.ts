// `aep-steer install codex` as data on disk: hooks.json gains one shim hook per Codex 0.171.0 event,
// keeps every other hook, installs idempotently, uninstalls only its own, and refuses a broken file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CODEX_EVENTS, codexHooksPath, installCodex, uninstallCodex } from '../../../src/adapters/codex/installer.js';

const SECRET = 'codex-secret-0123456789';
let root = '';
const env = () => ({ CODEX_HOME: join(root, '.codex'), HOME: root });
const opts = () => ({
  user: true,
  port: 18378,
  secret: SECRET,
  neutral: undefined,
  attentionTimeoutMs: 55_000,
  env: env(),
});
const read = (f: string) =>
  JSON.parse(readFileSync(f, 'utf8')) as {
    hooks: Record<string, { matcher?: string; hooks: { type: string; command: string; timeout: number }[] }[]>;
    [k: string]: unknown;
  };

test.before.each(() => {
  root = mkdtempSync(join(tmpdir(), 'aep-codex-inst-'));
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

test('writes $CODEX_HOME/hooks.json with the shim on every event, and says how to trust the hooks', () => {
  const r = installCodex(opts());
  assert.is(r.file, join(root, '.codex', 'hooks.json'));
  assert.equal(r.added, [...CODEX_EVENTS]);
  assert.ok(r.notes.some((n) => n.includes('/hooks') && n.includes('--dangerously-bypass-hook-trust')));
  const file = read(r.file);
  for (const event of CODEX_EVENTS) {
    const hook = file.hooks[event]!.at(-1)!.hooks[0]!;
    assert.is(hook.type, 'command');
    assert.match(hook.command, /aep-steer-hook\.sh/);
    // The shim reads the secret from the state directory (D21): hooks.json never holds it.
    assert.match(
      hook.command,
      new RegExp(`-k ${join(root, '.aep-steering', 'secret')} http://127\\.0\\.0\\.1:18378/hook/ ?`),
    );
    assert.not.match(hook.command, SECRET);
    assert.not.match(hook.command, /'\{\}'/, 'Codex neutral reply is empty output, never {}');
  }
  assert.is(file.hooks.SessionEnd![0]!.hooks[0]!.timeout, 3, 'SessionEnd is clamped to 3 s by Codex');
  assert.ok(file.hooks.PermissionRequest![0]!.hooks[0]!.timeout > 55, 'a held hook outlasts the attention timeout');
  assert.is(file.hooks.PreToolUse![0]!.matcher, '*');
});

test('keeps other hooks and settings, is idempotent, and uninstall removes only its own', () => {
  const path = codexHooksPath({ user: true }, env());
  mkdirSync(join(root, '.codex'), { recursive: true });
  const mine = { type: 'command', command: '/usr/local/bin/audit-log', timeout: 5 };
  writeFileSync(
    path,
    JSON.stringify({ description: 'team hooks', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] } }),
  );
  installCodex(opts());
  const again = installCodex(opts());
  assert.is(again.changed, false, 'a second install changes nothing');
  const file = read(path);
  assert.is(file.description, 'team hooks');
  assert.equal(file.hooks.PreToolUse![0], { matcher: 'Bash', hooks: [mine] });
  assert.is(file.hooks.PreToolUse!.length, 2);
  const u = uninstallCodex({ user: true, env: env() });
  assert.equal(u.removed.sort(), [...CODEX_EVENTS].sort());
  assert.equal(read(path), { description: 'team hooks', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] } });
  assert.is(uninstallCodex({ user: true, env: env() }).changed, false);
});

test('--project writes DIR/.codex/hooks.json; a malformed file is refused and left as it was', () => {
  const r = installCodex({ ...opts(), user: undefined, project: root });
  assert.is(r.file, join(root, '.codex', 'hooks.json'));
  const path = join(root, '.codex', 'hooks.json');
  writeFileSync(path, '{ not json');
  try {
    installCodex(opts());
    assert.unreachable('must refuse');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'CONFIG_INVALID');
  }
  assert.is(readFileSync(path, 'utf8'), '{ not json');
  assert.ok(existsSync(path));
});

test.run();
