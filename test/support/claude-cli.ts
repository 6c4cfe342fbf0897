// Runs the pinned Claude Code CLI headless and offline against a loopback mock model API, with
// HOME, config and temp dirs isolated per run (vendor-clis-observed §1.2).
import { offlineClaudeEnv } from '../../src/demo/demo.js';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { vendorBinary, type Workspace } from './vendor-e2e.js';

/** A HOME with a project folder inside it (vendor-e2e.ts `workspace`). */
export type ClaudeWorkspace = Workspace;

/** The offline environment of one run: its own HOME and temp dir, the mock model, no traffic elsewhere. */
export function claudeEnv(ws: ClaudeWorkspace, mockUrl: string): NodeJS.ProcessEnv {
  const tmp = join(ws.root, 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  return offlineClaudeEnv(ws.home, 'sk-ant-test', mockUrl, tmp);
}

export interface ClaudeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stream-json lines that parsed. */
  lines: Record<string, unknown>[];
}

export interface ClaudeRunOptions {
  ws: ClaudeWorkspace;
  mockUrl: string;
  prompt: string;
  /** Skip permission prompts (needs IS_SANDBOX=1 as root). Default true. */
  bypassPermissions?: boolean;
  extraArgs?: string[];
  /** Kill the CLI after this long (a stuck run fails the test instead of hanging the suite). */
  killAfterMs?: number;
}

export interface ClaudeProcess {
  /** stream-json lines parsed so far. */
  lines: Record<string, unknown>[];
  /** Writes one user turn (with `--input-format stream-json`). */
  sendUser(text: string): void;
  /** Writes one stream-json line as given (a user message with its own fields, a control request). */
  write(line: Record<string, unknown>): void;
  /** Closes stdin: the CLI finishes its work and exits. */
  end(): void;
  /** Ends the CLI at once (a test that failed midway leaves nothing running). */
  kill(): void;
  /** Resolves with the first (past or future) stdout line that matches. */
  waitForLine(match: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  done: Promise<ClaudeRun>;
}

/**
 * Starts the CLI. With `prompt` it runs one turn (`-p "<prompt>"`); without, it reads user turns
 * as stream-json lines from stdin (§1.2 multi-turn).
 */
export function startClaude(opts: Omit<ClaudeRunOptions, 'prompt'> & { prompt?: string }): ClaudeProcess {
  const bin = vendorBinary('claude-code');
  if (bin === undefined)
    throw new Error('Claude Code CLI not installed: run scripts/install-vendor-cli.sh claude-code');
  const args = opts.prompt === undefined ? ['-p', '--input-format', 'stream-json'] : ['-p', opts.prompt];
  args.push('--output-format', 'stream-json', '--verbose', '--model', 'claude-sonnet-4-5');
  if (opts.bypassPermissions !== false) args.push('--dangerously-skip-permissions');
  args.push(...(opts.extraArgs ?? []));
  const env = claudeEnv(opts.ws, opts.mockUrl);
  const child = spawn(bin, args, {
    cwd: opts.ws.project,
    env,
    stdio: [opts.prompt === undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const chunk = d.toString();
    stdout += chunk;
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const l of parts) {
      let parsed: Record<string, unknown>;
      try {
        if (l.trim() === '') continue;
        parsed = JSON.parse(l) as Record<string, unknown>;
      } catch {
        continue; // non-JSON lines (warnings) stay in stdout only
      }
      lines.push(parsed);
      for (const w of [...waiters]) {
        if (w.match(parsed)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed);
        }
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 90_000);
  const done = new Promise<ClaudeRun>((resolve, reject) => {
    child.on('error', (err) => {
      clearTimeout(killer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, lines });
    });
  });
  return {
    lines,
    sendUser(text) {
      child.stdin?.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`);
    },
    write(line) {
      child.stdin?.write(`${JSON.stringify(line)}\n`);
    },
    end() {
      child.stdin?.end();
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    waitForLine(match) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        done.then(
          (r) => reject(new Error(`claude exited (${String(r.code)}) before the awaited line: ${r.stderr}`)),
          reject,
        );
      });
    },
    done,
  };
}
