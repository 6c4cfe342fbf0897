// `aep-steer install hermes` edits the hooks: block of config.yaml as text: every line it adds is
// marked, every other line (comments, other hooks, other keys) stays byte for byte, and uninstall
// restores the file it found.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HERMES_EVENTS, installHermes, uninstallHermes } from '../../../src/adapters/hermes/installer.js';

const SECRET = 'hermes-secret-0123456789';
let home = '';
const opts = () => ({
  user: true,
  port: 18393,
  secret: SECRET,
  neutral: {},
  attentionTimeoutMs: 55_000,
  env: { HERMES_HOME: home },
});
const file = () => join(home, 'config.yaml');

/** Our entries, read back: JSON flow mappings under their event keys. */
function ours(text: string): Record<string, { command: string; timeout: number }> {
  const out: Record<string, { command: string; timeout: number }> = {};
  let event = '';
  for (const line of text.split('\n')) {
    const key = /^\s+([a-z_]+):/.exec(line);
    if (key && !line.trimStart().startsWith('-')) event = key[1]!;
    const entry = /^\s+- (\{.*\})\s+# aep-steer$/.exec(line);
    if (entry) out[event] = JSON.parse(entry[1]!) as { command: string; timeout: number };
  }
  return out;
}

test.before.each(() => {
  home = mkdtempSync(join(tmpdir(), 'aep-hermes-inst-'));
});
test.after.each(() => rmSync(home, { recursive: true, force: true }));

test('a config without hooks gains a hooks: block with the twelve events; uninstall restores it', () => {
  const original = '# my hermes\nmodel:\n  default: hermes-4  # pinned\n';
  writeFileSync(file(), original);
  const r = installHermes(opts());
  assert.is(r.file, file());
  const text = readFileSync(file(), 'utf8');
  assert.ok(text.startsWith(original.trimEnd()));
  const entries = ours(text);
  assert.equal(Object.keys(entries).sort(), [...HERMES_EVENTS].sort());
  assert.match(entries.pre_llm_call!.command, /aep-steer-hook\.sh .*http:\/\/127\.0\.0\.1:18393\/hook\//);
  assert.ok(entries.pre_tool_call!.timeout > 55, 'a gated pre_tool_call outlasts the attention timeout');
  assert.ok(r.notes.some((n) => n.includes('hooks_auto_accept')));
  assert.is(installHermes(opts()).changed, false, 'idempotent');
  uninstallHermes({ user: true, env: { HERMES_HOME: home } });
  assert.is(readFileSync(file(), 'utf8').trimEnd(), original.trimEnd());
});

test('an existing hooks: block keeps its entries and comments; ours go beside them', () => {
  const original = [
    'model: hermes-4',
    'hooks:',
    '  # team policy',
    '  pre_tool_call:',
    '    - command: "~/.hermes/agent-hooks/block-rm.sh"',
    '      matcher: "terminal"',
    '      timeout: 10',
    '  on_session_start:',
    '    - command: "~/bin/notify.sh"',
    'hooks_auto_accept: false',
    '',
  ].join('\n');
  writeFileSync(file(), original);
  installHermes(opts());
  const text = readFileSync(file(), 'utf8');
  for (const line of original.split('\n')) assert.ok(text.split('\n').includes(line), `kept: ${line}`);
  assert.equal(Object.keys(ours(text)).sort(), [...HERMES_EVENTS].sort());
  assert.ok(text.indexOf('hooks_auto_accept: false') > text.lastIndexOf('# aep-steer'), 'added inside the hooks block');
  uninstallHermes({ user: true, env: { HERMES_HOME: home } });
  assert.is(readFileSync(file(), 'utf8'), original);
});

test("Hermes's default `hooks: {}` becomes a block and comes back as `{}` on uninstall", () => {
  const original = 'model: hermes-4\nhooks: {}\nmemory:\n  enabled: true\n';
  writeFileSync(file(), original);
  installHermes(opts());
  const text = readFileSync(file(), 'utf8');
  assert.equal(Object.keys(ours(text)).sort(), [...HERMES_EVENTS].sort());
  assert.ok(text.includes('memory:\n  enabled: true'));
  assert.is(installHermes(opts()).changed, false);
  uninstallHermes({ user: true, env: { HERMES_HOME: home } });
  assert.is(readFileSync(file(), 'utf8'), original);
});

test('an inline hooks value is refused with nothing written; --project is refused', () => {
  writeFileSync(file(), 'hooks: {pre_llm_call: [{command: x}]}\n');
  for (const o of [opts(), { ...opts(), project: home, user: undefined }]) {
    try {
      installHermes(o);
      assert.unreachable('must refuse');
    } catch (e) {
      assert.is((e as { code?: string }).code, 'CONFIG_INVALID');
    }
  }
  assert.is(readFileSync(file(), 'utf8'), 'hooks: {pre_llm_call: [{command: x}]}\n');
});

test.run();
