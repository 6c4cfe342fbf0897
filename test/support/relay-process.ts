// `aep-steer relay` as a process started from a given binary (the clone's bin, an installed
// package), its stderr kept whole (tests assert what it printed), and one event posted with the
// local token its state directory holds.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { emitterFor, freshSession, post } from './relay-harness.js';

export interface RelayProcess {
  url: string;
  stderr(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startRelayProcess(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<RelayProcess> {
  const proc = spawn(cmd, [...args, 'relay', '--port', '0'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', resolve);
    proc.once('error', (err) => {
      stderr += err.message;
      resolve(null);
    });
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    return exited;
  };
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', () => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`relay exited ${code}: ${stderr}`)));
  }).catch(async (err: Error) => {
    await stop();
    throw err;
  });
  return { url, stderr: () => stderr, stop };
}

/** Posts one `session.started` with the local token `stateDir` holds (the relay's first start made it). */
export async function postWithLocalToken(url: string, stateDir: string): Promise<{ status: number; body: any }> {
  const token = readFileSync(join(stateDir, 'token'), 'utf8').trim();
  const line = `${JSON.stringify(emitterFor(freshSession('proc')).emit({ type: 'session.started' }))}\n`;
  return post(url, line, { authorization: `Bearer ${token}` });
}
