// The demo: the embedded stack (relay on SQLite, Claude Code adapter, loopback), one Claude Code
// session, one instruction sent through the relay as a consumer sends it, followed to where it
// landed, then the audit of the logs. The real CLI runs when it is installed (against a mock model
// API on loopback); otherwise a scripted session posts the hook inputs the CLI would send.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installClaudeCode } from '../adapters/claude-code/installer.js';
import { writeSecret } from '../adapters/install.js';
import type { AepEvent } from '../protocol/envelope.js';
import { RelayConsumer } from '../consumer/connection.js';
import { auditFiles, type AuditResult } from '../audit/audit.js';
import { renderText } from '../audit/report.js';
import { plain, type Paint } from '../audit/paint.js';
import { sendInstruction } from '../consumer/instruct.js';
import type { InstructOutcome } from '../consumer/verb.js';
import { describeOutcome } from '../consumer/explain.js';
import { pinnedCli } from '../doctor/vendor-clis.js';
import { startMockModel, type MockModel } from './mock-model.js';
import { scriptedSession } from './scripted-session.js';
import { recordEvents, startStack, type EventRecord, type Stack } from './stack.js';

export const DEFAULT_DEMO_TEXT = 'Before you finish, say which tests you ran.';
const DEMO_SENDER = 'aep-steer-demo';
/** The demo's whole budget: it must never hang a terminal or a CI job. */
const CLI_KILL_MS = 60_000;

export interface DemoOptions {
  relayPort: number;
  hookPort: number;
  text: string;
  /** Force the scripted session even when the real CLI is installed. */
  scripted?: boolean;
  /** Path of the `claude` binary; found under .vendor-clis otherwise. */
  claude?: string;
  /** Keep the working directory (logs, relay store) instead of removing it. */
  keep?: boolean;
  say: (line: string) => void;
  paint?: Paint;
}

export interface DemoResult {
  mode: 'claude-cli' | 'scripted';
  outcome: InstructOutcome;
  /** Where the instruction text showed up: the model request, or the hook reply. */
  landed?: string;
  audit: AuditResult;
  dir: string;
}

/** The pinned CLI that `scripts/install-vendor-cli.sh claude-code` installs, if it is there. */
export function installedClaude(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return pinnedCli('claude-code', 'claude', env);
}

/** Every string inside a parsed value: context placement in a model request varies (vendor-clis-observed §1.8). */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

const clip = (s: string, n = 240): string => (s.length > n ? `${s.slice(0, n)}…` : s);

function exportOf(events: AepEvent[], path: string): void {
  writeFileSync(path, events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : ''));
}

export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const p = opts.paint ?? plain;
  const say = opts.say;
  const dir = mkdtempSync(join(tmpdir(), 'aep-steer-demo-'));
  const cleanup: (() => Promise<void> | void)[] = [];
  try {
    const stack: Stack = await startStack({ dir, relayPort: opts.relayPort, hookPort: opts.hookPort, instruct: true });
    cleanup.push(() => stack.close());
    say(`${p.bold('relay')}    ${stack.relayUrl} (SQLite ${join(dir, 'relay.db')})`);
    say(
      `${p.bold('adapter')}  Claude Code, hooks on http://127.0.0.1:${stack.adapter.port}/hook/<secret>, AEP_INSTRUCT=1, log ${stack.logPath}`,
    );

    const observer = await RelayConsumer.connect({
      url: stack.relayUrl,
      token: stack.token,
      agent: 'aep-steer-demo-watch',
    });
    cleanup.push(() => observer.close());
    const { seen, waitFor } = await recordEvents(observer);

    const consumer = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.token, agent: DEMO_SENDER });
    cleanup.push(() => consumer.close());
    const claude = opts.scripted ? undefined : (opts.claude ?? installedClaude());
    const announce = (session: string) =>
      say(
        `${p.bold('session')}  ${session} is live on the relay; its claimant declares x.claude-code.control.instruct`,
      );
    const instruct = async (session: string, text: string, onAccepted: () => void, noWait = false) =>
      sendInstruction(
        consumer,
        { sender: DEMO_SENDER },
        {
          session,
          text,
          timeoutMs: 30_000,
          noWait,
          onSending: ({ command, type }) => say(`${p.dim('→')} ${type} ${command}: ${JSON.stringify(text)}`),
          onAccepted: ({ ack }) => {
            say(`${p.green('✓')} accepted (ack ${ack.id}, cause = the command id)`);
            onAccepted();
          },
        },
      );

    const run: DemoRun = { opts, p, say, dir, cleanup, stack, waitFor, announce, instruct };
    const mode: DemoResult['mode'] = claude !== undefined ? 'claude-cli' : 'scripted';
    const { outcome, landed } = claude !== undefined ? await withClaudeCli(run, claude) : await scripted(run);
    const exportPath = join(dir, 'relay-export.jsonl');
    exportOf(seen, exportPath);
    const audit = await auditFiles([stack.logPath, exportPath]);
    say('');
    say(p.bold(`audit of ${stack.logPath} and the relay stream:`));
    say(renderText(audit, p));
    return { mode, outcome, ...(landed ? { landed } : {}), audit, dir };
  } finally {
    for (const c of cleanup.reverse()) {
      try {
        await c();
      } catch {
        // Shutting down: keep closing the rest.
      }
    }
    if (opts.keep) say(`working directory kept: ${dir}`);
    else {
      rmSync(dir, { recursive: true, force: true });
      say(p.dim('working directory removed (--keep keeps the relay store and the logs)'));
    }
  }
}

/** What both ways of running the session use: the stack, the watcher's record, cleanup and sending. */
interface DemoRun {
  opts: DemoOptions;
  p: Paint;
  say: (line: string) => void;
  dir: string;
  cleanup: (() => Promise<void> | void)[];
  stack: Stack;
  waitFor: EventRecord['waitFor'];
  announce(session: string): void;
  instruct(session: string, text: string, onAccepted: () => void, noWait?: boolean): Promise<InstructOutcome>;
}

/** The first instruction's outcome, and where its text showed up. */
interface Landing {
  outcome: InstructOutcome;
  landed: string | undefined;
}

/**
 * The real CLI against a mock model API on loopback: the instruction is queued before the model's
 * first answer, and the model requests show where its text landed.
 */
async function withClaudeCli(run: DemoRun, claude: string): Promise<Landing> {
  const { opts, p, say, dir, cleanup, stack, waitFor, announce, instruct } = run;
  let landed: string | undefined;
  const model: MockModel = await startMockModel();
  cleanup.push(() => model.close());
  const home = join(dir, 'home');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  // The hook shim reads the secret from a state directory (D21): the demo keeps its own.
  const env = { AEP_STATE_DIR: join(dir, 'state') };
  writeSecret(stack.secret, env);
  installClaudeCode({
    project,
    port: stack.adapter.port,
    secret: stack.secret,
    neutral: {},
    attentionTimeoutMs: 55_000,
    env,
  });
  say(`${p.bold('agent')}    Claude Code CLI ${claude} against a mock model API at ${model.url}`);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const child = spawnClaude(claude, project, home, model.url, tmp);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = clip(stderr + d.toString(), 2000)));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), CLI_KILL_MS);
  cleanup.push(async () => {
    clearTimeout(killer);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  // The model's first turn waits until the instruction is queued, so the next hook must carry it.
  await Promise.race([
    model.firstRequest,
    exited.then((code) => {
      throw new Error(`claude exited (${code}) before its first model request: ${stderr}`);
    }),
  ]);
  const session = (await waitFor((e) => e.type === 'run.started' && e.session !== undefined)).session!;
  announce(session);
  const outcome = await instruct(session, opts.text, () => model.release());
  say(describeOutcome(outcome, p));
  const code = await exited;
  clearTimeout(killer);
  say(`${p.dim(`claude exited with ${code}; ${model.requests.length} model requests`)}`);
  const hit = model.requests.find((r) => r.raw.includes(opts.text));
  if (hit) {
    const where = strings(hit.body).find((s) => s.includes(opts.text)) ?? '';
    landed = `model request #${hit.index + 1}: ${JSON.stringify(clip(where.trim()))}`;
    say(`${p.bold('landed')}   in ${landed}`);
  } else {
    say(`${p.red('✗')} the instruction text is in none of the ${model.requests.length} model requests`);
  }
  await waitFor((e) => e.session === session && e.type === 'session.ended');
  return { outcome, landed };
}

/** The pinned Claude Code CLI in print mode, in a HOME of its own, against the mock model API. */
function spawnClaude(claude: string, project: string, home: string, modelUrl: string, tmp: string): ChildProcess {
  return spawn(
    claude,
    [
      '-p',
      'Say hi from the shell.',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'claude-sonnet-4-5',
      '--dangerously-skip-permissions',
    ],
    {
      cwd: project,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: offlineClaudeEnv(home, 'sk-ant-demo', modelUrl, tmp),
    },
  );
}

/** A scripted session posting the hook inputs the CLI would send; a second instruction is dropped at its end. */
async function scripted(run: DemoRun): Promise<Landing> {
  const { opts, p, say, dir, stack, waitFor, announce, instruct } = run;
  say(
    `${p.bold('agent')}    scripted Claude Code 2.1.332 session (hook inputs as the CLI sends them; run scripts/install-vendor-cli.sh claude-code for the real CLI)`,
  );
  const s = scriptedSession({ cwd: join(dir, 'project'), home: dir });
  for (const h of s.opening) await stack.postHook(h);
  await waitFor((e) => e.session === s.session && e.type === 'run.started');
  announce(s.session);
  let landed: string | undefined;
  let reply: Promise<{ status: number; body: unknown }> | undefined;
  const outcome = await instruct(s.session, opts.text, () => {
    reply = stack.postHook(s.toolCall[0]!); // the next eligible moment: PreToolUse
  });
  say(describeOutcome(outcome, p));
  if (reply) landed = `the PreToolUse hook reply: ${JSON.stringify((await reply).body)}`;
  if (landed) say(`${p.bold('landed')}   in ${landed}`);
  for (const h of s.toolCall.slice(1)) await stack.postHook(h);
  await stack.postHook(s.closing[0]!); // Stop, with nothing left to say
  // A second instruction that no moment takes before the session ends: dropped, on the record (D10).
  say(`${p.dim('a second instruction, sent just before the session ends:')}`);
  const late = await instruct(s.session, 'And update the changelog.', () => {
    void stack.postHook(s.closing[1]!); // SessionEnd
  });
  say(describeOutcome(late, p));
  await waitFor((e) => e.session === s.session && e.type === 'session.ended');
  return { outcome, landed };
}

/** Claude Code run offline: its own HOME and temp dir, a local model URL, no traffic elsewhere. */
export function offlineClaudeEnv(home: string, key: string, modelUrl: string, tmp: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: home,
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_BASE_URL: modelUrl,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_TMPDIR: tmp,
    IS_SANDBOX: '1',
  };
}
