// Runs the pinned Qwen Code 0.24.4 `qwen serve` daemon against the loopback mock model, with a
// bearer token (`--require-auth`: every route, `/health` included, needs it) kept in a mode-600
// file, and talks to it as a client of its own would (a web shell or SDK): open a session, send
// a prompt, set the approval mode.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { qwenEnv, vendorBinary, writeQwenSettings, type Workspace } from './vendor-e2e.js';

export interface ServeDaemon {
  url: string;
  port: number;
  token: string;
  /** The mode-600 file holding the token. */
  tokenFile: string;
  child: ChildProcess;
  output(): string;
  api(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> | undefined }>;
  /** Opens a session (the daemon's primary workspace) and returns its id. */
  session(mode?: 'yolo' | 'default'): Promise<string>;
  /** Sends a prompt; the daemon answers 202 at once and runs it. */
  prompt(session: string, text: string): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startQwenServe(
  ws: Workspace,
  mockBaseUrl: string,
  o: { port?: number; token?: string } = {},
): Promise<ServeDaemon> {
  const bin = vendorBinary('qwen-code');
  if (bin === undefined) throw new Error('Qwen Code CLI not installed: run scripts/install-vendor-cli.sh qwen-code');
  writeQwenSettings(ws);
  const token = o.token ?? randomBytes(16).toString('hex');
  const tokenFile = join(ws.root, 'qwen-serve.token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const child = spawn(bin, ['serve', '--port', String(o.port ?? 0), '--no-web', '--require-auth'], {
    cwd: ws.project,
    env: { ...qwenEnv(ws, mockBaseUrl), QWEN_SERVER_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a kill reaches the daemon's agent child too.
    detached: true,
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`qwen serve did not listen in 60 s:\n${out.slice(-2000)}`)),
      60_000,
    );
    const on = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`qwen serve exited (${code}):\n${out.slice(-2000)}`));
    });
  });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  return {
    url,
    port: Number(new URL(url).port),
    token,
    tokenFile,
    child,
    output: () => out,
    api,
    async session(mode = 'yolo') {
      const r = await api('POST', '/session', {});
      if (r.status !== 200) throw new Error(`POST /session: ${r.status} ${JSON.stringify(r.body)}`);
      const id = r.body?.sessionId as string;
      if (mode === 'yolo') await api('POST', `/session/${id}/approval-mode`, { mode: 'yolo' });
      return id;
    },
    async prompt(session, text) {
      const r = await api('POST', `/session/${session}/prompt`, { prompt: [{ type: 'text', text }] });
      if (r.status !== 202) throw new Error(`POST /prompt: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body?.promptId as string;
    },
    kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        process.kill(-child.pid!, signal);
      });
    },
  };
}
