// `aep-steer` as a person runs it in their project folder, for the e2e suites that go through
// `up`/`run`/`down` (bin/aep-steer.js, the suite's environment and state directory): a command's
// output as it comes and its end, the processes left running in the workspace, and the audit of
// the adapter log `up` wrote (AEP_STATE_DIR/logs/<vendor>.jsonl).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { auditCommandClean } from './audit-clean.js';
import { AEP_BIN } from './services-rig.js';
import type { Workspace } from './vendor-e2e.js';

interface Running {
  child: ChildProcess;
  out(): string;
  err(): string;
  /** Both streams as they came. */
  all(): string;
  code: Promise<number | null>;
}

interface Ended {
  code: number | null;
  out: string;
  err: string;
  all: string;
}

interface WorkspaceCli {
  /** Starts a command; `stdin: 'pipe'` keeps its input open for the test to end. */
  aep(args: string[], o?: { stdin?: 'pipe' }): Running;
  /** Runs a command to its end. */
  done(args: string[]): Promise<Ended>;
  /** Processes whose working directory is in the workspace (a vendor's server runs in the project). */
  inWorkspace(): number[];
  /** `aep-steer audit` of the vendor adapter's log that `up` wrote: exit 0, no violation. */
  auditClean(vendor: string): Promise<string>;
}

/** `ws` and `env` are read when a command runs (a suite sets them in its `before`). */
export function workspaceCli(ws: () => Workspace, env: () => NodeJS.ProcessEnv): WorkspaceCli {
  const aep: WorkspaceCli['aep'] = (args, o = {}) => {
    const child = spawn(process.execPath, [AEP_BIN, ...args], {
      cwd: ws().project,
      env: env(),
      stdio: [o.stdin ?? 'ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let all = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      all += d.toString();
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      all += d.toString();
    });
    const code = new Promise<number | null>((r) => child.once('close', (c) => r(c)));
    return { child, out: () => out, err: () => err, all: () => all, code };
  };
  return {
    aep,
    async done(args) {
      const r = aep(args);
      const code = await r.code;
      return { code, out: r.out(), err: r.err(), all: r.all() };
    },
    inWorkspace() {
      const root = ws().root;
      return readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .flatMap((pid) => {
          try {
            return readlinkSync(`/proc/${pid}/cwd`).startsWith(root) ? [Number(pid)] : [];
          } catch {
            return [];
          }
        });
    },
    auditClean(vendor) {
      const e = env();
      return auditCommandClean(e, join(e.AEP_STATE_DIR!, 'logs', `${vendor}.jsonl`));
    },
  };
}
