// `aep-steer doctor` against a real relay, a real adapter and the real installer's settings file:
// every check passes when everything is in place, and each broken piece is named with its fix.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { installClaudeCode } from '../../src/adapters/claude-code/installer.js';
import { vendorTokens } from '../../src/adapters/registry.js';
import { adapterConfig, runAdapter, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { DOCTOR_EXIT, runDoctor, type DoctorFlags } from '../../src/cli/doctor-command.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { sink } from './support.js';

const root = mkdtempSync(join(tmpdir(), 'aep-doctor-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  AEP_STATE_DIR: join(root, 'state'),
  CLAUDE_CONFIG_DIR: join(root, 'claude'),
  AEP_TOKEN: '',
  AEP_HOOK_PORT: '',
  AEP_VENDOR_CLIS_DIR: join(root, 'vendor-clis'),
};
let relay: RelayHandle;
let adapter: RunningAdapter | undefined;

/** A stand-in `claude` that prints a version the way the real one does. */
function fakeCli(version: string): string {
  const bin = join(root, `claude-${version}`);
  writeFileSync(bin, `#!/bin/sh\necho "${version} (Claude Code)"\n`);
  chmodSync(bin, 0o755);
  return bin;
}

async function doctor(vendor: string | undefined, f: Partial<DoctorFlags> = {}) {
  const out = sink();
  const err = sink();
  const code = await runDoctor(
    vendor,
    { relay: relay.socketUrl, json: true, ...f },
    { out: out.stream, err: err.stream, env },
  );
  const text = out.text();
  const parsed = text
    ? (JSON.parse(text) as { ok: boolean; checks: { name: string; ok: boolean; detail: string; fix?: string }[] })
    : undefined;
  return { code, checks: parsed?.checks ?? [], err: err.text() };
}
const byName = (checks: { name: string; ok: boolean; detail: string; fix?: string }[], name: string) =>
  checks.find((c) => c.name === name)!;

async function startAdapter(instruct: boolean): Promise<RunningAdapter> {
  await adapter?.close();
  const cfg = adapterConfig(
    'claude-code',
    { port: '0', relay: relay.socketUrl, token: 'doc-token', instruct, log: join(root, 'a.jsonl') },
    env,
  );
  adapter = await runAdapter(cfg, () => {});
  return adapter;
}

test.before(async () => {
  relay = await startRelay({ port: 0, storePath: ':memory:', token: 'doc-token' });
});

test.after(async () => {
  await adapter?.close();
  await relay.close();
  rmSync(root, { recursive: true, force: true });
});

test('no relay: named with how to start it, and exit 1', async () => {
  const r = await doctor(undefined, { relay: 'ws://127.0.0.1:1/socket' });
  assert.is(r.code, DOCTOR_EXIT.problems);
  assert.equal(
    [byName(r.checks, 'relay').ok, byName(r.checks, 'relay').fix],
    [false, 'start it: aep-steer up --relay-port 1'],
  );
});

test('a wrong token is told apart from an unreachable relay, with the token hint', async () => {
  const r = await doctor(undefined, { token: 'wrong' });
  assert.is(r.code, DOCTOR_EXIT.problems);
  assert.ok(byName(r.checks, 'relay').ok);
  const t = byName(r.checks, 'token');
  assert.is(t.ok, false);
  assert.match(t.detail, 'refused the given token');
  assert.match(t.fix!, "pass the relay's token with --token or AEP_TOKEN");
});

test('relay only: exit 0 when it answers and takes the token', async () => {
  const r = await doctor(undefined, { token: 'doc-token' });
  assert.is(r.code, DOCTOR_EXIT.ok, JSON.stringify(r.checks));
});

test('a vendor: adapter, steering gate, hooks and CLI version all hold: exit 0', async () => {
  const a = await startAdapter(true);
  const { secret } = adapterConfig('claude-code', { port: '0', relay: false }, env);
  installClaudeCode({ user: true, port: a.adapter.port, secret, neutral: {}, attentionTimeoutMs: 55_000, env });
  const r = await doctor('claude-code', {
    token: 'doc-token',
    port: String(a.adapter.port),
    cli: fakeCli(claudeCode.version),
  });
  assert.is(r.code, DOCTOR_EXIT.ok, JSON.stringify(r.checks, null, 2));
  assert.equal(
    r.checks.map((c) => c.name),
    ['relay', 'token', 'state', 'adapter', 'steering gate', 'hooks', 'vendor CLI'],
  );
  assert.match(byName(r.checks, 'hooks').detail, `point at 127.0.0.1:${a.adapter.port} with the stored secret`);
});

test('each broken piece is named with its fix: gate off, stale hooks, wrong CLI version, no adapter', async () => {
  const a = await startAdapter(false);
  const r = await doctor('claude-code', { token: 'doc-token', port: String(a.adapter.port), cli: fakeCli('2.1.197') });
  assert.is(r.code, DOCTOR_EXIT.problems);
  const gate = byName(r.checks, 'steering gate');
  assert.equal(
    [gate.ok, gate.fix],
    [false, 'restart it: aep-steer down claude-code && AEP_INSTRUCT=1 aep-steer up claude-code'],
  );
  const hooks = byName(r.checks, 'hooks');
  assert.is(hooks.ok, false, "the hooks point at the previous adapter's port");
  assert.match(hooks.detail, `the adapter's is ${a.adapter.port}`);
  assert.is(hooks.fix, 'aep-steer install claude-code');
  const cli = byName(r.checks, 'vendor CLI');
  assert.match(cli.detail, '2.1.197; the claude-code table was observed on 2.1.332');
  // In a clone, the fix is the clone's pinned install and the binary it puts in .vendor-clis/.
  const pinned = join(root, 'vendor-clis', 'claude-code', 'node_modules', '.bin', 'claude');
  assert.is(
    cli.fix,
    `${join(import.meta.dirname, '..', '..', 'scripts', 'install-vendor-cli.sh')} claude-code, then --cli ${pinned}`,
  );
  await a.close();
  adapter = undefined;
  const down = await doctor('claude-code', { token: 'doc-token', port: String(a.adapter.port) });
  const ad = byName(down.checks, 'adapter');
  assert.equal(
    [ad.ok, ad.detail, ad.fix],
    [false, `nothing listening on 127.0.0.1:${a.adapter.port}`, 'AEP_INSTRUCT=1 aep-steer up claude-code'],
  );
});

test('no hooks installed, an unknown vendor, a bad port', async () => {
  const other = { ...env, CLAUDE_CONFIG_DIR: join(root, 'empty') };
  const out = sink();
  const err = sink();
  await runDoctor(
    'claude-code',
    { relay: relay.socketUrl, token: 'doc-token', json: true },
    { out: out.stream, err: err.stream, env: other },
  );
  const hooks = byName(JSON.parse(out.text()).checks, 'hooks');
  assert.equal([hooks.ok, hooks.fix], [false, 'aep-steer install claude-code']);
  const unknown = await doctor('nobody');
  assert.equal(
    [unknown.code, unknown.err],
    [DOCTOR_EXIT.usage, `doctor: unknown vendor "nobody"; known: ${vendorTokens().join(', ')}\n`],
  );
  assert.is((await doctor('codex', { port: 'x' })).code, DOCTOR_EXIT.usage);
});

test('text output prints each problem with its fix and how many there are', async () => {
  const out = sink();
  const err = sink();
  await runDoctor(undefined, { relay: 'ws://127.0.0.1:1/socket' }, { out: out.stream, err: err.stream, env });
  assert.match(out.text(), '✗ relay: cannot reach relay at ws://127.0.0.1:1/socket');
  assert.match(out.text(), '    fix: start it: aep-steer up --relay-port 1');
  assert.match(out.text(), '2 problems: fix the first one first, then run aep-steer doctor again');
});

test.run();
