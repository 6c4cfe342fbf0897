// The README's "Steering a real agent" block, run as written: each line of it, in order, as a
// process of bin/aep-steer.js, with nothing set but free ports (AEP_PORT, AEP_RELAY,
// AEP_HOOK_PORT) and a private state directory. `claude` is a stand-in on PATH that answers
// --version like 2.1.332 and otherwise plays a Claude Code session through the hooks the
// installer wrote (the real shim): SessionStart, UserPromptSubmit, then a PreToolUse each 300 ms
// until one reply carries context, then Stop and SessionEnd.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedSession } from '../../src/demo/scripted-session.js';
import { projectRoot } from '../support/shared-dir.js';

const BIN = join(projectRoot, 'bin', 'aep-steer.js');
const root = mkdtempSync(join(tmpdir(), 'aep-readme-'));
const project = join(root, 'project');
const fakeBin = join(root, 'bin');
const children: ChildProcess[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** The README block (the first `sh` block under the "Steering a real agent" heading), line by line, comments cut. */
function readmeLines(): string[] {
  const text = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const block = /\n## Steering a real agent\n[\s\S]*?\n```sh\n([\s\S]*?)```/.exec(text)?.[1];
  assert.ok(block, 'the README has the block');
  return block!
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** A stand-in `claude`: the session's hook inputs go through the hook commands the installer wrote. */
function writeFakeClaude(_session: ReturnType<typeof scriptedSession>): void {
  mkdirSync(fakeBin, { recursive: true });
  const script = join(fakeBin, 'fake-claude.mjs');
  writeFileSync(
    script,
    `
import { existsSync, readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
if (process.argv[2] === '--version') { console.log('2.1.332 (Claude Code)'); process.exit(0); }
const s = JSON.parse(process.env.FAKE_SESSION);
// A project install writes settings.local.json (D21); Claude Code reads it beside settings.json.
const file = existsSync('.claude/settings.local.json') ? '.claude/settings.local.json' : '.claude/settings.json';
const hooks = JSON.parse(readFileSync(file, 'utf8')).hooks;
const fire = (input) => execSync(hooks[input.hook_event_name][0].hooks[0].command, { input: JSON.stringify(input) }).toString();
for (const h of s.opening) fire(h);
for (let i = 0; i < 200; i++) {
  const reply = fire(s.toolCall[0]);
  if (reply.includes('additionalContext')) { console.log('claude saw: ' + reply.trim()); break; }
  await new Promise((r) => setTimeout(r, 300));
}
for (const h of s.closing) fire(h);
`,
  );
  writeFileSync(join(fakeBin, 'claude'), `#!/bin/sh\nexec node ${script} "$@"\n`);
  chmodSync(join(fakeBin, 'claude'), 0o755);
  // `aep-steer` as installed: the clone's bin.
  writeFileSync(join(fakeBin, 'aep-steer'), `#!/bin/sh\nexec node ${BIN} "$@"\n`);
  chmodSync(join(fakeBin, 'aep-steer'), 0o755);
}

test.after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  rmSync(root, { recursive: true, force: true });
});

test('the README block works pasted as written: no token set anywhere, the instruction is delivered', async () => {
  mkdirSync(project, { recursive: true });
  const session = scriptedSession({ cwd: project });
  writeFakeClaude(session);
  const relayPort = await freePort();
  const hookPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: `${fakeBin}:${process.env.PATH}`,
    HOME: join(root, 'home'),
    AEP_STATE_DIR: join(root, 'state'),
    AEP_PORT: String(relayPort),
    AEP_RELAY: `ws://127.0.0.1:${relayPort}/socket`,
    AEP_HOOK_PORT: String(hookPort),
    FAKE_SESSION: JSON.stringify(session),
  };
  const outputs: string[] = [];
  for (const line of readmeLines()) {
    const background = line.endsWith('&');
    const words = line
      .replace(/&$/, '')
      .trim()
      .replace('<id>', session.session)
      .match(/"[^"]*"|\S+/g)!
      .map((w) => w.replace(/^"|"$/g, ''));
    const vars = Object.fromEntries(
      words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => w.split('=') as [string, string]),
    );
    const [cmd, ...args] = words.filter((w) => !/^[A-Z_]+=/.test(w));
    if (background) {
      const child = spawn(cmd!, args, { cwd: project, env: { ...env, ...vars }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let text = '';
      // A person waits for the daemon to say it is up before the next line.
      await new Promise<void>((resolve, reject) => {
        const onData = (d: Buffer) => {
          text += d.toString();
          if (/listening on|hooks on/.test(text)) resolve();
        };
        child.stderr!.on('data', onData);
        child.once('exit', (code) => reject(new Error(`${line} exited ${code}: ${text}`)));
      });
      outputs.push(`$ ${line}\n${text}`);
      continue;
    }
    if (cmd === 'claude') {
      // The agent runs alongside the rest (a person works in it while steering).
      const child = spawn(cmd, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let said = '';
      child.stdout!.on('data', (d: Buffer) => (said += d.toString()));
      child.once('exit', () => outputs.push(`$ claude\n${said}`));
      await new Promise((r) => setTimeout(r, 1500));
      continue;
    }
    const r = spawnSync(cmd!, args, { cwd: project, env: { ...env, ...vars }, encoding: 'utf8', timeout: 120_000 });
    outputs.push(`$ ${line}\n${r.stdout}${r.stderr}`);
    assert.is(r.status, 0, outputs.join('\n'));
  }
  const all = outputs.join('\n');
  assert.match(all, `relay: local token created in ${join(root, 'state', 'token')}`);
  assert.match(all, 'all checks hold', 'doctor passes before the agent starts');
  assert.match(all, new RegExp(`${session.session}\\s+claude-code\\s+live`), 'sessions lists it live');
  assert.match(all, /✓ delivered at PreToolUse after \d+ ms/);
  assert.not.match(all, /AEP_TOKEN|unauthorized|refused the token/);
});

test.run();
