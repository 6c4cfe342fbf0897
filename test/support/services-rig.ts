// The rig of the CLI services tests (`up`, `status`, `down`, `run`): bin/aep-steer.js run as a
// person runs it, each test in a temp HOME and state directory of its own, with `down` after each
// test so no service it started outlives it. Stand-in vendor binaries write what they were given
// to a reports file, one JSON line each, which the tests read back.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import { projectRoot } from './shared-dir.js';
import { until } from './until.js';

export const AEP_BIN = join(projectRoot, 'bin', 'aep-steer.js');

/** What the environment of the machine running the tests must not lend the CLI. */
const MACHINE_SETTINGS = ['AEP_PORT', 'AEP_HOOK_PORT', 'AEP_RELAY', 'AEP_TOKEN', 'AEP_INSTRUCT'];

interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** When the process exited; `closedAt` is when every pipe reached EOF (no process holds one). */
  exitedAt: number;
  closedAt: number;
}

/** Runs the CLI to its end; `until` instead ends it (SIGTERM) once its output holds that text. */
export function runCli(args: string[], o: { env: NodeJS.ProcessEnv; cwd?: string; until?: string }): Promise<CliRun> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, [AEP_BIN, ...args], {
      env: o.env,
      ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let exitedAt = 0;
    let status: number | null = null;
    const seen = () => {
      if (o.until !== undefined && `${stdout}${stderr}`.includes(o.until)) child.kill('SIGTERM');
    };
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      seen();
    });
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      seen();
    });
    child.on('exit', (code) => {
      exitedAt = Date.now();
      status = code;
    });
    child.on('close', () => resolve({ status, stdout, stderr, exitedAt, closedAt: Date.now() }));
  });
}

/** Whether something accepts connections on the loopback port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ port, host: '127.0.0.1' });
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** Takes the loopback port, as another program holding it would. */
export function hold(port: number): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

interface ServicesRig {
  /** This test's temp folder (HOME is `home` in it, the state directory `state`). */
  readonly dir: string;
  /** The CLI's environment for this test; a test may change it before it runs the CLI. */
  env: NodeJS.ProcessEnv;
  state(): string;
  /** `home/project`, made when the rig runs the CLI in it. */
  project(): string;
  /** The reports file stand-in binaries append to. */
  reports(): string;
  /** The report lines written so far (none before the file exists). */
  reported(): Record<string, any>[];
  /** The record `up` keeps of a service it started (`state/run/<name>.pid`). */
  record(name: string): Record<string, any>;
  cli(args: string[], until?: string): Promise<CliRun>;
  /** Writes an executable stand-in `bin/<name>` (a Node script) and returns its path. */
  standIn(name: string, script: string): string;
  /**
   * A server the person started themselves in the project folder, in its own process group:
   * resolves once it listens on `port`; `stop` ends the group.
   */
  personsServer(argv: string[], env: NodeJS.ProcessEnv, port: number): Promise<{ pid: number; stop(): void }>;
}

interface RigOptions {
  /** Run the CLI in `home/project` (as a person in their project folder); default the test's own cwd. */
  inProject?: boolean;
  /** More settings to drop from the machine's environment. */
  unset?: string[];
  /** Settings of the test's own, given the rig once its folder exists (a stand-in binary written there). */
  env?: (rig: ServicesRig) => NodeJS.ProcessEnv | Promise<NodeJS.ProcessEnv>;
}

/** Registers each test's folder and environment (`before.each`) and `down` then removal (`after.each`). */
export function servicesRig(prefix: string, o: RigOptions = {}): ServicesRig {
  let dir = '';
  const state = () => join(dir, 'state');
  const project = () => join(dir, 'home', 'project');
  const reports = () => join(dir, 'reports.jsonl');
  const rig: ServicesRig = {
    get dir() {
      return dir;
    },
    env: {},
    state,
    project,
    reports,
    reported: () =>
      existsSync(reports())
        ? readFileSync(reports(), 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>)
        : [],
    record: (name) => JSON.parse(readFileSync(join(state(), 'run', `${name}.pid`), 'utf8')) as Record<string, any>,
    cli: (args, until) =>
      runCli(args, {
        env: rig.env,
        ...(o.inProject ? { cwd: project() } : {}),
        ...(until === undefined ? {} : { until }),
      }),
    standIn(name, script) {
      const bin = join(dir, 'bin', name);
      mkdirSync(join(dir, 'bin'), { recursive: true });
      writeFileSync(bin, `#!${process.execPath}\n${script}`);
      chmodSync(bin, 0o755);
      return bin;
    },
    async personsServer([bin, ...args], env, port) {
      const own = spawn(bin!, args, { env: { ...rig.env, ...env }, cwd: project(), stdio: 'ignore', detached: true });
      const stop = () => process.kill(-own.pid!, 'SIGKILL');
      try {
        await until(() => listening(port), 'the person server listens');
      } catch (err) {
        // It may have exited already: what it said then is the failure to report.
        try {
          stop();
        } catch {}
        throw err;
      }
      return { pid: own.pid!, stop };
    },
  };
  test.before.each(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    if (o.inProject) mkdirSync(project(), { recursive: true });
    rig.env = { ...process.env, HOME: join(dir, 'home'), AEP_STATE_DIR: state() };
    for (const k of [...MACHINE_SETTINGS, ...(o.unset ?? [])]) delete rig.env[k];
    Object.assign(rig.env, await o.env?.(rig));
  });
  test.after.each(async () => {
    await rig.cli(['down']);
    rmSync(dir, { recursive: true, force: true });
  });
  return rig;
}
