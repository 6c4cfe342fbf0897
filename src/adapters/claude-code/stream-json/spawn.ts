// D45: a Claude Code worker the adapter spawns: a headless `claude -p` in stream-json (the lane
// `aep-steer run claude -p` uses), run with the adapter's environment in the worker's directory,
// joined to the adapter's stream-json lane. Its session id is chosen here (`--session-id`), so
// the answer names it before the CLI prints a line. Its input stays open while the worker runs,
// so it can be steered and given later turns; stopping it ends its input, then the process.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { Launcher, Worker } from '../../../streams/spawner.js';
import { headlessArgs } from './run.js';
import { lineReader, userLine, uuidFor, type Line } from './stream.js';

export interface ClaudeSpawnOptions {
  bin: string;
  env: NodeJS.ProcessEnv;
  /** Opens the adapter's stream-json lane; answers the socket it listens on. */
  open(): Promise<string>;
  /** The CLI's own further arguments for every worker (its permission mode, say). */
  args?: readonly string[];
  /** Each line a worker prints, with its session, for one that follows the workers closely. */
  onLine?: (session: string, line: Line) => void;
}

const joinLane = (path: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = connect(path);
    s.once('connect', () => resolve(s));
    s.once('error', (err) => reject(new Error(`cannot join the stream-json lane at ${path}: ${err.message}`)));
  });

export function claudeLauncher(o: ClaudeSpawnOptions): Launcher {
  return async (req): Promise<Worker> => {
    const lane = await joinLane(await o.open());
    const session = randomUUID();
    const parsed = headlessArgs([
      '-p',
      '--session-id',
      session,
      ...(req.model === undefined ? [] : ['--model', req.model]),
      ...(o.args ?? []),
    ]);
    if ('error' in parsed) throw new Error(parsed.error);
    const child = spawn(o.bin, parsed.args, { cwd: req.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    // Its stderr is read and let go: nothing of the worker's reaches the adapter's terminal.
    child.stderr.resume();
    const ended = new Promise<void>((r) => child.once('close', () => r()));
    const started = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => reject(new Error(`cannot run ${o.bin}: ${err.message} (set AEP_CLAUDE_BIN)`)));
    });
    void ended.then(() => lane.destroy());
    const toCli = (l: Line): void => {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify(l)}\n`);
    };
    lane.on('error', () => undefined);
    lane.on('data', lineReader(toCli));
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (d: Buffer) => {
      if (!lane.destroyed) lane.write(d);
    });
    const onLine = o.onLine;
    if (onLine !== undefined)
      child.stdout.on(
        'data',
        lineReader((l) => onLine(session, l)),
      );
    try {
      await started;
    } catch (err) {
      lane.destroy();
      throw err;
    }
    // The first prompt travels under the spawn command's id, as an instruction's does.
    toCli(userLine(uuidFor(req.commandId), req.prompt));
    return {
      session,
      ended,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.stdin.end();
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await ended;
        clearTimeout(killer);
      },
    };
  };
}
