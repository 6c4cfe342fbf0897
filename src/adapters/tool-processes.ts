// D33: the tool processes a stopped turn may leave behind. A vendor can stop a turn and leave the
// shell command it was running alive (observed on Codex 0.171.0: after `turn/interrupt` the
// command's `bash -lc` goes on under the app-server until the server exits). The lane finds such
// a process among the vendor process's descendants (Linux `/proc`), says it, and on the sender's
// `kill_tools` ends it. Nothing here runs unless a lane asks; nothing throws (fail open).
import { readdirSync, readFileSync } from 'node:fs';
import type { ToolProcess } from '../machines/session-context.js';

/** One process as `/proc` shows it. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** `Z`: a zombie, already ended and waiting for its parent to reap it. */
  state: string;
  argv: string[];
}

/** How `endTools` waits: SIGTERM first, SIGKILL for what is still there after `graceMs`. */
export interface EndOptions {
  graceMs?: number;
  pollMs?: number;
}

const PROC = '/proc';

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`${PROC}/${pid}/stat`, 'utf8');
    // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses, so read after the last `)`.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const argv = readFileSync(`${PROC}/${pid}/cmdline`, 'utf8').split('\0');
    if (argv.at(-1) === '') argv.pop();
    return { pid, state: rest[0] ?? '?', ppid: Number(rest[1]), pgid: Number(rest[2]), argv };
  } catch {
    return undefined;
  }
}

/** Every process on the host, or undefined where `/proc` cannot be read (not Linux). */
export function processTable(): ProcInfo[] | undefined {
  let names: string[];
  try {
    names = readdirSync(PROC);
  } catch {
    return undefined;
  }
  const out: ProcInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const p = readProc(Number(n));
    if (p !== undefined) out.push(p);
  }
  return out;
}

/** The live descendants of `root` (children first), from a process table. */
export function descendantsOf(root: number, table: readonly ProcInfo[]): ProcInfo[] {
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of table) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: ProcInfo[] = [];
  const walk = (pid: number, depth: number): void => {
    if (depth > 64) return;
    for (const c of byParent.get(pid) ?? []) {
      if (c.state === 'Z') continue;
      out.push(c);
      walk(c.pid, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}

/**
 * A command line as a POSIX shell splits it into words (quotes and backslashes), the form a
 * vendor shows its commands in (`/bin/bash -lc 'while …'`); undefined for an unbalanced quote.
 */
export function shellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i]!;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j += 1) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`\n'.includes(line[j + 1]!)) j += 1;
        word += line[j];
      }
      if (j >= line.length) return undefined;
      inWord = true;
      i = j;
    } else if (ch === '\\' && i + 1 < line.length) {
      word += line[i + 1];
      inWord = true;
      i += 1;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

const same = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** `sh -c SCRIPT` (any flags that include `c`): the shell's name and its script. */
function shellScript(words: readonly string[]): { shell: string; script: string } | undefined {
  const c = words.findIndex((w) => /^-[a-z]*c[a-z]*$/.test(w));
  if (c < 1 || c !== words.length - 2) return undefined;
  return { shell: words[0]!.split('/').pop()!, script: words.at(-1)! };
}

/**
 * Whether a process runs `command`: its argv is the command's words; or both are a shell given
 * the same script (observed: Codex 0.171.0 shows `/bin/bash -lc '…'` and may run `/bin/bash -c
 * '…'`); or the shell ran a single command in its own place, whose words the argv then is.
 */
function runs(p: ProcInfo, command: string): boolean {
  const words = shellWords(command);
  if (words === undefined) return p.argv.join(' ') === command;
  if (same(p.argv, words)) return true;
  const shown = shellScript(words);
  if (shown === undefined) return false;
  const own = shellScript(p.argv);
  if (own !== undefined && own.shell === shown.shell && own.script === shown.script) return true;
  const script = shellWords(shown.script);
  return script !== undefined && script.length > 0 && same(p.argv, script);
}

/**
 * The commands the vendor never finished, as processes still running under `vendorPid`: each
 * with the topmost process that runs it. Where the lane cannot look (no vendor pid, no `/proc`),
 * each is said without a pid: it may still run, and nothing claims it stopped.
 */
export function findTools(vendorPid: number | undefined, commands: readonly string[]): ToolProcess[] {
  if (commands.length === 0) return [];
  const table = vendorPid === undefined ? undefined : processTable();
  if (vendorPid === undefined || table === undefined) return commands.map((command) => ({ command }));
  const under = descendantsOf(vendorPid, table);
  const out: ToolProcess[] = [];
  for (const command of commands) {
    const matches = under.filter((p) => runs(p, command));
    const top = matches.filter((p) => !matches.some((m) => m.pid === p.ppid));
    for (const p of top) if (!out.some((o) => o.pid === p.pid)) out.push({ pid: p.pid, command });
  }
  return out;
}

/** The pids under `vendorPid` now (a turn's start), so its end can tell what the turn started. */
export function pidsUnder(vendorPid: number | undefined): Set<number> | undefined {
  const table = vendorPid === undefined ? undefined : processTable();
  return vendorPid === undefined || table === undefined
    ? undefined
    : new Set(descendantsOf(vendorPid, table).map((p) => p.pid));
}

/**
 * A vendor's shell tool, as it runs: a shell given a script (`bash -c '…'`, any flags with `c`),
 * the helper that sets one up (Codex 0.171.0 starts `/proc/self/exe --codex-run-as-process-setup
 * … /bin/bash -c '…'`), or its sandbox wrapper (`codex-linux-sandbox … -- <command>`).
 */
const isShellTool = (argv: readonly string[]): boolean =>
  shellScript(argv) !== undefined ||
  argv.includes('--codex-run-as-process-setup') ||
  (argv[0]?.split('/').pop() ?? '') === 'codex-linux-sandbox';

/**
 * The shell tools a turn started that still run under `vendorPid`: not there at the turn's start
 * (`before`), each the topmost of its tree, named by what it runs. For a vendor that starts its
 * command before it says so (observed: Codex 0.171.0 with a TUI client announces a command's item
 * only once the command returns), so a command interrupted meanwhile is found all the same.
 */
export function shellToolsSince(vendorPid: number | undefined, before: ReadonlySet<number>): ToolProcess[] {
  const table = vendorPid === undefined ? undefined : processTable();
  if (vendorPid === undefined || table === undefined) return [];
  const fresh = descendantsOf(vendorPid, table).filter((p) => !before.has(p.pid) && isShellTool(p.argv));
  return fresh
    .filter((p) => !fresh.some((q) => q.pid === p.ppid))
    .map((p) => ({ pid: p.pid, command: shellScript(p.argv)?.script ?? p.argv.join(' ') }));
}

/** Live: the process exists and is not a zombie. */
function alive(pid: number): boolean {
  const p = readProc(pid);
  return p !== undefined && p.state !== 'Z';
}

/**
 * The tools still running once the vendor had `graceMs` to end what it ends itself: observed on
 * Codex 0.171.0, an interrupt ends the command the turn was running a moment after the turn's end
 * is announced, so only what outlasts that is left running. A tool without a pid is kept: it
 * cannot be looked at, and nothing may call it stopped.
 */
export async function outlasting(tools: readonly ToolProcess[], opts: EndOptions = {}): Promise<ToolProcess[]> {
  const graceMs = opts.graceMs ?? 5000;
  const pollMs = opts.pollMs ?? 50;
  const until = Date.now() + graceMs;
  const live = (): ToolProcess[] => tools.filter((t) => t.pid === undefined || alive(t.pid));
  while (Date.now() < until && live().some((t) => t.pid !== undefined)) {
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return live();
}

/** Sends a signal; false where it is not this process's to signal (EPERM) or already gone. */
function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends each tool process with everything under it: SIGTERM to its process group (a vendor
 * starts each command as a group leader) and to its descendants, SIGKILL after `graceMs` to
 * whatever is still alive. Those that are gone are `killed`; any this process may not signal
 * (another user's) stay `leftRunning`. A tool without a pid cannot be found and stays too.
 */
export async function endTools(
  tools: readonly ToolProcess[],
  opts: EndOptions = {},
): Promise<{ killed: ToolProcess[]; leftRunning: ToolProcess[] }> {
  const graceMs = opts.graceMs ?? 2000;
  const pollMs = opts.pollMs ?? 50;
  const table = processTable() ?? [];
  const trees = tools.map((t) => {
    if (t.pid === undefined) return { tool: t, pids: [] as number[] };
    const own = table.find((p) => p.pid === t.pid);
    const group = own !== undefined && own.pgid === own.pid ? table.filter((p) => p.pgid === own.pid) : [];
    const pids = [t.pid, ...descendantsOf(t.pid, table).map((p) => p.pid), ...group.map((p) => p.pid)];
    return { tool: t, pids: [...new Set(pids)] };
  });
  const every = (): number[] => trees.flatMap((t) => t.pids).filter(alive);
  const gone = async (until: number): Promise<boolean> => {
    while (every().length > 0) {
      if (Date.now() >= until) return false;
      await new Promise((r) => setTimeout(r, pollMs));
    }
    return true;
  };
  for (const t of trees) {
    const own = table.find((p) => p.pid === t.tool.pid);
    if (own !== undefined && own.pgid === own.pid) signal(-own.pid, 'SIGTERM');
    for (const pid of t.pids) signal(pid, 'SIGTERM');
  }
  if (!(await gone(Date.now() + graceMs))) {
    for (const pid of every()) signal(pid, 'SIGKILL');
    await gone(Date.now() + graceMs);
  }
  const killed: ToolProcess[] = [];
  const leftRunning: ToolProcess[] = [];
  for (const t of trees) {
    if (t.pids.length > 0 && !t.pids.some(alive)) killed.push(t.tool);
    else leftRunning.push(t.tool);
  }
  return { killed, leftRunning };
}
