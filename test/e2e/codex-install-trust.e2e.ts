// `aep-steer install codex --project DIR` on the real Codex 0.171.0, in a folder Codex has not
// been asked to trust yet (a fresh clone, a new project): Codex lists no hook of such a folder, so
// the first `codex` there used to stop at "Hooks need review". The installer trusts the hooks it
// wrote (their keys and hashes as Codex reports them once the folder is trusted) and never the
// folder itself: that stays Codex's own question. A folder the person marked untrusted is left so.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { installCodex, listCodexHooks } from '../../src/adapters/codex/installer.js';
import {
  codexHome,
  vendorBinary,
  workspace,
  writeCodexConfig,
  type Workspace,
  vendorMissing,
} from '../support/vendor-e2e.js';

const binary = vendorBinary('codex');
const workspaces: Workspace[] = [];
test.after(() => {
  for (const ws of workspaces) rmSync(ws.root, { recursive: true, force: true });
});

function fresh(): { ws: Workspace; env: NodeJS.ProcessEnv; config: string } {
  const ws = workspace('aep-codex-trust-');
  workspaces.push(ws);
  // A new folder: Codex has no answer of the person's about trusting it yet.
  writeCodexConfig(ws, 'http://127.0.0.1:9/v1', { trusted: false });
  const config = join(codexHome(ws), 'config.toml');
  return { ws, config, env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary! } };
}

const install = (ws: Workspace, env: NodeJS.ProcessEnv) =>
  installCodex({
    project: ws.project,
    port: 18378,
    secret: 's'.repeat(24),
    neutral: undefined,
    attentionTimeoutMs: 55_000,
    env,
  });

if (!vendorMissing(binary, 'codex', 'the pinned Codex CLI is missing: scripts/install-vendor-cli.sh codex')) {
  test('a folder Codex has not trusted yet: the hooks are trusted, the folder is left to Codex to ask', () => {
    const { ws, env, config } = fresh();
    assert.not.match(readFileSync(config, 'utf8'), '[projects.');
    const r = install(ws, env);
    assert.match(r.notes[0] ?? '', /^trusted 11 hooks in /, r.notes.join('\n'));
    assert.match(r.notes[0] ?? '', 'its first start there asks "Trust this folder?"');
    assert.not.match(readFileSync(config, 'utf8'), '[projects.', 'the installer never trusts the folder');
    // The person answers Codex's folder question: every hook the installer wrote is then trusted.
    appendFileSync(config, `\n[projects.${JSON.stringify(ws.project)}]\ntrust_level = "trusted"\n`);
    const listed = listCodexHooks(binary!, { ...process.env, ...env }, ws.project);
    assert.ok(Array.isArray(listed), String(listed));
    const ours = (listed as { sourcePath?: string; trustStatus?: string }[]).filter((h) => h.sourcePath === r.file);
    assert.is(ours.length, 11);
    assert.equal([...new Set(ours.map((h) => h.trustStatus))], ['trusted']);
  });

  test('a folder the person marked untrusted stays untrusted, hooks included, and the note says how to trust them', () => {
    const { ws, env, config } = fresh();
    appendFileSync(config, `\n[projects.${JSON.stringify(ws.project)}]\ntrust_level = "untrusted"\n`);
    const r = install(ws, env);
    assert.match(r.notes[0] ?? '', /^codex did not report the hooks in .*open \/hooks and trust/);
    assert.not.match(readFileSync(config, 'utf8'), 'hooks.state');
  });
}

test.run();
