// D21 on disk and in the environment: owner-only files for history and tokens, a tokens file
// others can read refused with what to do, `AEP_HOST=` never binding every interface, and the
// installers keeping the hook secret out of the files a project commits. Each failed before:
// the relay store came out 644 in a 755 directory, a world-readable tokens file was served,
// `AEP_HOST=` bound all interfaces, and `install claude-code --project` wrote the secret into
// `.claude/settings.json`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { installClaudeCode } from '../../src/adapters/claude-code/installer.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { installQwenCode } from '../../src/adapters/qwen-code/installer.js';
import { installVscode } from '../../src/adapters/vscode/installer.js';
import { secretPath, writeSecret } from '../../src/adapters/install.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { startRelay } from '../../src/relay/server.js';
import { SteeringError } from '../../src/protocol/errors.js';
import { projectRoot } from '../support/shared-dir.js';
import { adapter } from '../support/adapter.js';
import { emitterFor, ndjson, post } from '../support/relay-harness.js';
import { TOKENS_FILE, writeTokensFile } from './fixture.js';

const mode = (p: string): number => statSync(p).mode & 0o777;
const fresh = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));

/** Runs `aep-steer relay` as a real process until it says where it listens (or exits). */
function runRelay(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ listening?: string; code?: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(projectRoot, 'src', 'cli', 'main.ts'), 'relay', '--port', '0', '--memory', ...args],
      {
        cwd: projectRoot,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    let listening: string | undefined;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m && listening === undefined) {
        listening = m[1]!;
        child.kill('SIGTERM');
      }
    });
    child.once('exit', (code) => resolve(listening !== undefined ? { listening, stderr } : { code, stderr }));
  });
}

test("the relay's SQLite history, its sidecars and the directory it creates are owner-only", async () => {
  const dir = join(fresh('aep-modes-'), 'state');
  const storePath = join(dir, 'relay.db');
  const relay = await startRelay({ port: 0, storePath });
  await post(relay.url, ndjson([emitterFor('modes').emit({ type: 'session.started' })]));
  relay.stats();
  assert.is(mode(dir), 0o700);
  for (const f of [storePath, `${storePath}-wal`, `${storePath}-shm`]) {
    assert.ok(existsSync(f), f);
    assert.is(mode(f), 0o600, f);
  }
  await relay.close();
});

test('a tokens file other users can read is refused with the fix; mode 600 is served', async () => {
  const open = writeTokensFile(0o644);
  let err: unknown;
  try {
    loadTokensFile(open);
  } catch (e) {
    err = e;
  }
  assert.instance(err, SteeringError);
  assert.is((err as SteeringError).code, 'CONFIG_INVALID');
  assert.match((err as Error).message, `readable or writable by other users (mode 644); run: chmod 600 ${open}`);
  const run = await runRelay(['--tokens', open], { AEP_STATE_DIR: fresh('aep-tokens-state-') });
  assert.is(run.listening, undefined, 'the relay must not start');
  assert.is(run.code, 1);
  assert.match(run.stderr, 'chmod 600');
  assert.equal(
    loadTokensFile(writeTokensFile(0o600)).map((e) => e.identity),
    TOKENS_FILE.tokens.map((e) => e.identity),
  );
});

test('an empty AEP_HOST counts as unset: the relay binds 127.0.0.1, never every interface', async () => {
  const state = fresh('aep-empty-env-');
  const run = await runRelay([], {
    AEP_HOST: '',
    AEP_TOKEN: '',
    AEP_TOKENS_FILE: '',
    AEP_STORE: '',
    AEP_STATE_DIR: state,
  });
  assert.ok(run.listening, run.stderr);
  assert.match(run.listening!, /^http:\/\/127\.0\.0\.1:\d+$/);
  // An empty AEP_TOKEN is no token: the relay makes its local token rather than accept "".
  assert.match(run.stderr, `local token created in ${join(state, 'token')}`);
  assert.is(mode(join(state, 'token')), 0o600);
});

/** Every file under `root`, relative, with its text. */
function filesUnder(root: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ path: relative(root, p), text: readFileSync(p, 'utf8') });
    }
  };
  walk(root);
  return out;
}

test('project installs keep the hook secret out of every file a project commits', () => {
  const SECRET = 'committed-secret-0123456789';
  const root = fresh('aep-commit-');
  const project = join(root, 'project');
  mkdirSync(project);
  const env = { HOME: join(root, 'home'), AEP_STATE_DIR: join(root, 'state'), AEP_CODEX_BIN: join(root, 'no-codex') };
  writeSecret(SECRET, env);
  const opts = { project, port: 8377, secret: SECRET, neutral: {}, attentionTimeoutMs: 55_000, env };
  const reports = [
    installClaudeCode(opts),
    installCodex({ ...opts, neutral: undefined }),
    installQwenCode(opts),
    installVscode(opts),
  ];
  const written = filesUnder(project);
  assert.equal(written.map((f) => f.path).sort(), [
    '.claude/settings.local.json',
    '.codex/hooks.json',
    '.github/hooks/aep-steer.json',
    '.qwen/settings.json',
  ]);
  for (const f of written) {
    // Every hook runs the shim, which reads the secret from the state directory.
    assert.not.match(f.text, SECRET, f.path);
    assert.match(f.text, `-k ${secretPath(env)}`, f.path);
    assert.is(mode(join(project, f.path)), 0o600, f.path);
  }
  assert.is(mode(join(project, '.claude')), 0o700);
  // Each report says where the secret is and who reads it.
  for (const r of reports)
    assert.ok(
      r.notes.some((n) => n.includes(secretPath(env))),
      r.file,
    );
});

test('aep-steer install says where it wrote the hooks and where the secret stays', async () => {
  const root = fresh('aep-install-cli-');
  const project = join(root, 'project');
  mkdirSync(project);
  const env = { AEP_STATE_DIR: join(root, 'state'), HOME: join(root, 'home') };
  const run = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(projectRoot, 'src', 'cli', 'main.ts'), 'install', 'claude-code', '--project', project],
        {
          cwd: projectRoot,
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`install exited ${code}: ${out}`))));
    });
  const first = await run();
  const settings = join(project, '.claude', 'settings.local.json');
  assert.match(first, `stored the hook secret in ${secretPath(env)}`);
  assert.match(first, `wrote ${settings}`);
  assert.match(first, `the hook secret stays in ${secretPath(env)} (mode 600)`);
  assert.match(first, 'keeps out of git');
  const secret = readFileSync(secretPath(env), 'utf8').trim();
  assert.not.match(readFileSync(settings, 'utf8'), secret);
  // Run again: nothing changes, and it still says where the secret is.
  const second = await run();
  assert.match(second, 'nothing changed');
  assert.match(second, `the hook secret stays in ${secretPath(env)}`);
});

test("an earlier install's hooks (with the secret) are taken out of the committed .claude/settings.json", () => {
  const SECRET = 'old-committed-secret-0123';
  const root = fresh('aep-migrate-');
  const project = join(root, 'project');
  mkdirSync(join(project, '.claude'), { recursive: true });
  const committed = join(project, '.claude', 'settings.json');
  writeFileSync(
    committed,
    JSON.stringify({
      model: 'opus',
      hooks: {
        PostToolUse: [{ matcher: '*', hooks: [{ type: 'http', url: `http://127.0.0.1:8377/hook/${SECRET}` }] }],
      },
    }),
  );
  const env = { AEP_STATE_DIR: join(root, 'state') };
  writeSecret(SECRET, env);
  const r = installClaudeCode({ project, port: 8377, secret: SECRET, neutral: {}, attentionTimeoutMs: 55_000, env });
  assert.ok(r.notes.some((n) => n.includes('removed the adapter hooks an earlier install wrote into')));
  assert.equal(JSON.parse(readFileSync(committed, 'utf8')), { model: 'opus' });
});

test('the installed shim command reads the secret from the state directory and reaches the adapter', async () => {
  const a = await adapter({ surface: surfaceFrom(claudeCode) });
  const root = fresh('aep-shim-secret-');
  const project = join(root, 'project');
  mkdirSync(project);
  const env = { AEP_STATE_DIR: join(root, 'state') };
  // The adapter's secret, stored where the shim will look (as `aep-steer adapter` stores it).
  const { SECRET } = await import('../support/adapter.js');
  writeSecret(SECRET, env);
  const r = installClaudeCode({
    project,
    port: a.handle.port,
    secret: SECRET,
    neutral: {},
    attentionTimeoutMs: 55_000,
    env,
  });
  const settings = JSON.parse(readFileSync(r.file, 'utf8')) as {
    hooks: Record<string, { hooks: { command?: string }[] }[]>;
  };
  const cmd = settings.hooks.SessionStart![0]!.hooks[0]!.command!;
  assert.not.match(cmd, SECRET);
  const session = 'shim-secret-session';
  const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
    child.stdin.end(
      JSON.stringify({
        session_id: session,
        hook_event_name: 'SessionStart',
        source: 'startup',
        cwd: project,
        transcript_path: join(root, 't.jsonl'),
      }),
    );
  });
  assert.is(out.code, 0);
  for (let i = 0; i < 100 && !a.events.some((e) => e.session === session && e.type === 'session.started'); i++)
    await new Promise((r) => setTimeout(r, 20));
  assert.ok(
    a.events.some((e) => e.session === session && e.type === 'session.started'),
    `adapter saw: ${a.events.map((e) => e.type).join(', ')} ${out.stdout}`,
  );
  // Without the secret file the shim fails open: the neutral reply, and nothing reaches the adapter.
  writeFileSync(secretPath(env), 'not a valid secret!\n');
  const neutral = await new Promise<string>((resolve) => {
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', () => resolve(stdout));
    child.stdin.end(JSON.stringify({ session_id: 'never-seen', hook_event_name: 'SessionStart', source: 'startup' }));
  });
  assert.is(neutral.trim(), '{}');
  assert.not.ok(a.events.some((e) => e.session === 'never-seen'));
  await a.handle.close();
});

test.run();
