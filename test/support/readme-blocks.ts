// The README's quick starts as a person meets them: each bold-titled paragraph of a section with
// its fenced `sh` blocks, read line by line (the command as typed, the comment after it), and a
// place to run them as that person would: a fresh HOME with a scratch project in it, `aep-steer`
// (the clone's bin/aep-steer.js) and the pinned vendor CLIs (.vendor-clis) on PATH through tiny
// launchers, free ports in the variables the CLI reads (AEP_PORT, AEP_RELAY, AEP_HOOK_PORT), each
// line run by bash as written, a terminal (tmux) for the lines a person types into one, and a
// look at /proc for what is still running under that HOME.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from './shared-dir.js';
import { startTui, type Tui } from './tui.js';

export interface ReadmeLine {
  /** The line as it stands in the block. */
  raw: string;
  /** What a person runs: the line without its comment. */
  command: string;
  /** The comment after `#`, if any ("terminal 1", "work as usual", …). */
  comment: string;
  /** It ends with `&`: it runs in the background. */
  background: boolean;
}

export interface ReadmeBlock {
  /** The bold title without its final period: "Codex, the app-server lane". */
  title: string;
  /** The prose between the title and the next title (the blocks' text included). */
  prose: string;
  /** Every line of the paragraph's `sh` blocks, in order; blank lines left out. */
  lines: ReadmeLine[];
}

/** Where an unquoted ` #` starts a comment in a shell line, or -1. */
function commentStart(line: string): number {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i += 1;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '\\') i += 1;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return i;
  }
  return -1;
}

function parseLine(raw: string): ReadmeLine {
  const at = commentStart(raw);
  const command = (at < 0 ? raw : raw.slice(0, at)).trim();
  const comment = at < 0 ? '' : raw.slice(at + 1).trim();
  return { raw, command, comment, background: /(^|[^&])&$/.test(command) };
}

/** The text of a `## ` section, from its heading to the next one. */
function section(readme: string, heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${heading}" section`);
  const next = readme.indexOf('\n## ', start + 4);
  return readme.slice(start, next < 0 ? undefined : next);
}

/** Each `**Title.**` paragraph of the section with the `sh` blocks under it (those without any are left out). */
export function quickStartBlocks(readme: string, heading = 'Quick starts, per vendor and way in'): ReadmeBlock[] {
  const text = section(readme, heading);
  const titles = [...text.matchAll(/^\*\*(.+?)\*\*/gm)];
  return titles.flatMap((m, i) => {
    const from = m.index! + m[0].length;
    const prose = text.slice(from, titles[i + 1]?.index ?? text.length);
    const lines = [...prose.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((b) =>
      b[1]!
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map(parseLine),
    );
    return lines.length === 0 ? [] : [{ title: m[1]!.replace(/\.$/, ''), prose, lines }];
  });
}

/** The words of a command line that are not `VAR=value` assignments. */
export const wordsOf = (command: string): string[] =>
  (command.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** The pinned vendor CLIs: the package folder under .vendor-clis and the command it installs. */
const VENDOR_CLIS = {
  'claude-code': 'claude',
  codex: 'codex',
  'qwen-code': 'qwen',
  cline: 'cline',
} as const;
export type VendorCli = keyof typeof VENDOR_CLIS;

const vendorClisDir = (): string => process.env.AEP_VENDOR_CLIS_DIR ?? join(projectRoot, '.vendor-clis');
export const vendorBin = (v: VendorCli): string => join(vendorClisDir(), v, 'node_modules', '.bin', VENDOR_CLIS[v]);

export interface LineRun {
  line: string;
  code: number | null;
  out: string;
}

export interface Proc {
  pid: number;
  argv: string[];
}

/** One person's machine for one block: fresh HOME, scratch project, PATH, ports. */
export class QuickStart {
  readonly root: string;
  readonly home: string;
  readonly project: string;
  readonly bin: string;
  /** What every line and the terminal run with; a persona adds its provider settings. */
  readonly env: NodeJS.ProcessEnv;
  /** What each line printed, in order: a failure shows it. */
  readonly transcript: string[] = [];
  private readonly background: ChildProcess[] = [];
  private term: Tui | undefined;
  private readonly name: string;

  private constructor(name: string, env: NodeJS.ProcessEnv, root: string) {
    this.name = name;
    this.root = root;
    this.home = join(root, 'home');
    this.project = join(this.home, 'project');
    this.bin = join(root, 'bin');
    this.env = env;
  }

  /** The last lines of each service log `up` wrote under this HOME: a failure shows them. */
  logTails(lines = 30): string {
    const dir = join(this.home, '.aep-steering', 'logs');
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.log') || n.endsWith('.jsonl'));
    } catch {
      return '';
    }
    return names
      .map((n) => `--- ${n}\n${readFileSync(join(dir, n), 'utf8').split('\n').slice(-lines).join('\n')}`)
      .join('\n');
  }

  /** A fresh HOME and project, launchers for `aep-steer` and the vendor CLIs, free ports in the environment. */
  static async create(name: string, vendors: readonly VendorCli[]): Promise<QuickStart> {
    const root = mkdtempSync(join(tmpdir(), `aep-qs-${name}-`));
    const relayPort = await freePort();
    const hookPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      HOME: join(root, 'home'),
      PATH: `${join(root, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      TERM: 'xterm-256color',
      LANG: process.env.LANG ?? 'C.UTF-8',
      AEP_PORT: String(relayPort),
      AEP_RELAY: `ws://127.0.0.1:${relayPort}/socket`,
      AEP_HOOK_PORT: String(hookPort),
      ...(process.env.CI === undefined ? {} : { CI: process.env.CI }),
    };
    const qs = new QuickStart(name, env, root);
    mkdirSync(qs.project, { recursive: true });
    mkdirSync(qs.bin, { recursive: true });
    const launcher = (file: string, body: string) => {
      writeFileSync(join(qs.bin, file), `#!/bin/sh\n${body}\n`);
      chmodSync(join(qs.bin, file), 0o755);
    };
    // `aep-steer` as installed: the clone's bin, on the Node that runs this test.
    launcher('aep-steer', `exec ${process.execPath} ${join(projectRoot, 'bin', 'aep-steer.js')} "$@"`);
    for (const v of vendors) launcher(VENDOR_CLIS[v], `exec ${vendorBin(v)} "$@"`);
    return qs;
  }

  /** Runs one command line with bash, as typed; resolves with its exit code and output. */
  run(command: string, limitMs = 150_000): Promise<LineRun> {
    return new Promise((resolve) => {
      const child = spawn('bash', ['-c', command], {
        cwd: this.project,
        env: this.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
      child.on('close', (code) => {
        clearTimeout(killer);
        this.transcript.push(`$ ${command}\n${out}${code === 0 ? '' : `[exit ${String(code)}]\n`}`);
        resolve({ line: command, code, out });
      });
    });
  }

  /**
   * Starts one command line with bash and hands back its output as it comes: `until` resolves when
   * the output matches (or rejects when the process exits first), `done` with its exit.
   */
  start(command: string): {
    child: ChildProcess;
    output: () => string;
    until: (re: RegExp, limitMs?: number) => Promise<string>;
    done: Promise<LineRun>;
  } {
    const child = spawn('bash', ['-c', command], {
      cwd: this.project,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.background.push(child);
    let out = '';
    const listeners = new Set<() => void>();
    const on = (d: Buffer) => {
      out += d.toString();
      for (const l of [...listeners]) l();
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    const done = new Promise<LineRun>((resolve) =>
      child.on('close', (code) => {
        this.transcript.push(`$ ${command}\n${out}${code === 0 ? '' : `[exit ${String(code)}]\n`}`);
        resolve({ line: command, code, out });
      }),
    );
    const until = (re: RegExp, limitMs = 120_000): Promise<string> =>
      new Promise((resolve, reject) => {
        let settled = false;
        const finish = (err?: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          listeners.delete(check);
          if (err === undefined) resolve(out);
          else reject(err);
        };
        const check = () => {
          if (re.test(out)) finish();
        };
        const timer = setTimeout(
          () => finish(new Error(`\`${command}\` never printed ${String(re)} in ${limitMs} ms; it printed:\n${out}`)),
          limitMs,
        );
        listeners.add(check);
        void done.then((r) =>
          finish(
            re.test(out)
              ? undefined
              : new Error(`\`${command}\` exited ${String(r.code)} before printing ${String(re)}:\n${out}`),
          ),
        );
        check();
      });
    return { child, output: () => out, until, done };
  }

  /** The person's terminal: an interactive bash in tmux, in the project, with this environment. */
  terminal(): Tui {
    this.term ??= startTui(`qs-${this.name}`, this.project, this.env, ['bash', '--norc', '--noprofile']);
    return this.term;
  }

  /** Closes the terminal as a person closes its window (its processes get SIGHUP). */
  closeTerminal(): void {
    this.term?.kill();
    this.term = undefined;
  }

  /** Live processes whose environment has this HOME (everything this machine's person started). */
  processes(): Proc[] {
    const out: Proc[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (/^\d+ \(.*\) [ZX] /s.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
        const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
        if (!env.includes(`HOME=${this.home}`)) continue;
        const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
        out.push({ pid: Number(name), argv });
      } catch {
        // gone meanwhile, or not ours to read
      }
    }
    return out;
  }

  /** The processes of a vendor's pinned binary: a command line naming a file of its .vendor-clis folder. */
  vendorProcesses(v: VendorCli): Proc[] {
    const dir = join(vendorClisDir(), v);
    return this.processes().filter((p) => p.argv.some((a) => a.startsWith(`${dir}/`)));
  }

  /** Ends everything: the terminal, the background lines, every process under this HOME; removes the folders. */
  async close(): Promise<void> {
    this.closeTerminal();
    for (const c of this.background) {
      try {
        if (c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (let round = 0; round < 3; round += 1) {
      const left = this.processes().filter((p) => p.pid !== process.pid);
      if (left.length === 0) break;
      for (const p of left) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Whether tmux is here (the terminal lines need it). */
export const tmuxHere = (): boolean => spawnSync('tmux', ['-V']).status === 0;
