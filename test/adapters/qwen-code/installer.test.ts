// `aep-steer install qwen-code` as data on disk: settings.json gains one HTTP hook per event (no
// shim), keeps every other setting and hook, installs idempotently and uninstalls only its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QWEN_CODE_EVENTS, installQwenCode, uninstallQwenCode } from '../../../src/adapters/qwen-code/installer.js';

const SECRET = 'qwen-secret-0123456789';
let root = '';
const opts = () => ({
  user: true,
  port: 18380,
  secret: SECRET,
  neutral: {},
  attentionTimeoutMs: 55_000,
  env: { HOME: root },
});
type Settings = {
  hooks: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]>;
  [k: string]: unknown;
};
const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Settings;

test.before.each(() => {
  root = mkdtempSync(join(tmpdir(), 'aep-qwen-inst-'));
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

test('writes ~/.qwen/settings.json with an HTTP hook to the adapter on every event', () => {
  const r = installQwenCode(opts());
  assert.is(r.file, join(root, '.qwen', 'settings.json'));
  const s = read(r.file);
  for (const event of QWEN_CODE_EVENTS) {
    const hook = s.hooks[event]!.at(-1)!.hooks[0]!;
    assert.equal(
      { type: hook.type, url: hook.url },
      { type: 'http', url: `http://127.0.0.1:18380/hook/${SECRET}` },
      event,
    );
  }
  assert.not.ok('MessageDisplay' in s.hooks, 'per-chunk MessageDisplay is not registered');
  assert.is(
    s.hooks.PermissionRequest![0]!.hooks[0]!.timeout,
    65,
    'seconds; the held loop outlasts the attention timeout',
  );
  assert.is(s.hooks.PostToolUse![0]!.matcher, '*');
});

test('keeps other settings and hooks, is idempotent, and uninstall removes only its own', () => {
  mkdirSync(join(root, '.qwen'), { recursive: true });
  const path = join(root, '.qwen', 'settings.json');
  const theirs = { type: 'command', command: '/usr/local/bin/lint', name: 'lint' };
  const before = {
    model: { name: 'mock-model' },
    hooks: { PostToolUse: [{ matcher: 'write_file', hooks: [theirs] }] },
  };
  writeFileSync(path, JSON.stringify(before));
  installQwenCode(opts());
  assert.is(installQwenCode(opts()).changed, false);
  const s = read(path);
  assert.equal(s.model, { name: 'mock-model' });
  assert.equal(s.hooks.PostToolUse![0], { matcher: 'write_file', hooks: [theirs] });
  uninstallQwenCode({ user: true, env: { HOME: root } });
  assert.equal(read(path), before);
});

test('--project notes that Qwen runs project hooks only in a trusted folder', () => {
  const r = installQwenCode({ ...opts(), user: undefined, project: root });
  assert.is(r.file, join(root, '.qwen', 'settings.json'));
  assert.ok(r.notes.some((n) => n.includes('trust')));
});

test.run();
