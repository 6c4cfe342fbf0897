// A vendor CLI's own terminal UI in tmux, driven like a person at the keyboard: `send-keys` in,
// `capture-pane` out. Each test runs its own tmux server, so no other session is touched.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import * as assert from 'uvu/assert';

export const tmuxMissing = (): boolean => spawnSync('tmux', ['-V']).status !== 0;

export interface Tui {
  /** What the terminal shows now. */
  screen(): string;
  keys(...k: string[]): void;
  /** Types `text` and submits it: keys that arrive together read as a paste, whose Enter is a newline. */
  submit(text: string): Promise<void>;
  /** Resolves once the terminal shows `text`; fails with what it shows instead. */
  shows(text: string, limitMs?: number): Promise<void>;
  kill(): void;
  /**
   * Ends the terminal and resolves once what ran in it exited: a CLI that outlives the hangup
   * (Claude Code 2.1.332's TUI does) is killed, with its process group, after `graceMs`.
   */
  end(graceMs?: number): Promise<void>;
}

/** A process is there: it exists and is not a zombie waiting to be reaped. */
const running = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

export function startTui(name: string, cwd: string, env: NodeJS.ProcessEnv, argv: string[]): Tui {
  const socket = join(tmpdir(), `aep-tui-${name}-${process.pid}.sock`);
  const server = ['-S', socket];
  const tmux = (...args: string[]) => spawnSync('tmux', [...server, ...args], { encoding: 'utf8' });
  const vars = Object.entries(env)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  const started = tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', '-c', cwd, 'env', ...vars, ...argv);
  assert.is(started.status, 0, started.stderr);
  const screen = (): string => tmux('capture-pane', '-p', '-t', name).stdout;
  const keys = (...k: string[]): void => assert.is(tmux('send-keys', '-t', name, ...k).status, 0);
  const kill = (): void => {
    tmux('kill-server');
    rmSync(socket, { force: true });
  };
  return {
    screen,
    keys,
    async submit(text) {
      keys('-l', text);
      await new Promise((r) => setTimeout(r, 500));
      keys('Enter');
    },
    async shows(text, limitMs = 60_000) {
      const until = Date.now() + limitMs;
      while (!screen().includes(text)) {
        if (Date.now() > until) throw new Error(`the TUI never showed "${text}"; it shows:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    kill,
    async end(graceMs = 5000) {
      const pid = Number(tmux('display-message', '-p', '-t', name, '#{pane_pid}').stdout.trim());
      kill();
      if (!Number.isInteger(pid) || pid <= 0) return;
      const until = Date.now() + graceMs;
      while (running(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      if (!running(pid)) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        process.kill(pid, 'SIGKILL');
      }
      while (running(pid)) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

/** A stdout stand-in that keeps what was written. */
export function textSink(): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(c: Buffer, _e, cb) {
      text += c.toString();
      cb();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = false;
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

/** `aep-steer respond` as a person runs it beside the TUI: exit code and what it printed. */
export function respondVia(relay: string, token: string, sender: string) {
  return async (session: string, request: string | undefined, word: string): Promise<{ code: number; out: string }> => {
    const { runRespond } = await import('../../src/cli/respond-command.js');
    const out = textSink();
    const code = await runRespond(
      word,
      { relay, token, sender, session, timeout: '20000', ...(request === undefined ? {} : { request }) },
      { out: out.stream, err: out.stream },
    );
    return { code, out: out.text() };
  };
}
