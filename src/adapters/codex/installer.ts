// Writes the adapter's command hooks (the shim, D15) into Codex's hooks.json and takes them out
// again, keeping every other hook. Codex runs no hook it does not trust and says nothing about it
// (vendor-clis-observed §2.4): when a codex binary is at hand, the installer asks it (app-server
// `hooks/list`) for the key and hash of each hook it wrote and persists that trust in config.toml
// the way Codex itself does; otherwise the report says plainly what the user must do.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { secretNote, settingsFile, shimCommand, shimTarget, writeTextFile } from '../install.js';
import type { InstallReport, ShimTarget } from '../install.js';
import { installJsonHooks, isShimHook, uninstallJsonHooks, type HookGroup } from '../hook-settings.js';
import type { InstallOptions, Installer } from '../table.js';

/** Codex 0.171.0 hook events (vendor-clis-observed §2.1). */
export const CODEX_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PreCompact',
  'PostCompact',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'SessionEnd',
] as const;

const MATCHED = new Set(['PreToolUse', 'PostToolUse', 'PermissionRequest']);
const HOOK_TIMEOUT_S = 10;
const SHIM_TIMEOUT_S = 5;
/** Codex clamps the SessionEnd hook to 3 s (vendor-clis-observed §2.3). */
const SESSION_END_TIMEOUT_S = 3;

const CODEX_TRUST_NOTE =
  'Codex skips hooks it does not trust, silently: start `codex`, open /hooks and trust the aep-steer hooks once ' +
  '(or run `codex exec --dangerously-bypass-hook-trust` for one invocation); AEP_CODEX_BIN=/path/to/codex lets the installer do it';

/** Marks the config.toml trust tables this installer wrote. */
const TRUST_MARKER = '# aep-steer';

export const codexHomeOf = (env: NodeJS.ProcessEnv): string => env.CODEX_HOME || join(env.HOME || homedir(), '.codex');

/** `--project DIR` → DIR/.codex/hooks.json; otherwise $CODEX_HOME/hooks.json (default ~/.codex). */
export const codexHooksPath = (
  opts: Pick<InstallOptions, 'project' | 'user'>,
  env: NodeJS.ProcessEnv = process.env,
): string => settingsFile(opts, '.codex', 'hooks.json', codexHomeOf(env));

function ourHook(
  event: string,
  url: ShimTarget,
  neutral: unknown,
  attentionTimeoutMs: number,
): Record<string, unknown> {
  if (event === 'SessionEnd') {
    return {
      type: 'command',
      command: shimCommand(url, neutral, SESSION_END_TIMEOUT_S - 1),
      timeout: SESSION_END_TIMEOUT_S,
    };
  }
  if (event === 'PermissionRequest') {
    // A held loop waits up to the attention timeout (D14); the vendor must wait longer than the shim.
    const shim = Math.ceil(attentionTimeoutMs / 1000) + 5;
    return { type: 'command', command: shimCommand(url, neutral, shim), timeout: shim + 5 };
  }
  return { type: 'command', command: shimCommand(url, neutral, SHIM_TIMEOUT_S), timeout: HOOK_TIMEOUT_S };
}

function ourGroup(event: string, url: ShimTarget, neutral: unknown, attentionTimeoutMs: number): HookGroup {
  const hooks = [ourHook(event, url, neutral, attentionTimeoutMs)];
  if (MATCHED.has(event)) return { matcher: '*', hooks };
  return event === 'SessionStart' ? { matcher: 'startup|resume|clear', hooks } : { hooks };
}

/** `AEP_CODEX_BIN`, else `codex` on PATH. */
export function codexBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.AEP_CODEX_BIN) return existsSync(env.AEP_CODEX_BIN) ? env.AEP_CODEX_BIN : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'codex'))) return join(dir, 'codex');
  }
  return undefined;
}

// Runs `codex app-server` over stdio for one `hooks/list` answer. The server exits on stdin EOF
// before answering, so a child Node process keeps the pipe open until the answer line arrives.
const HOOKS_LIST = `
const { spawn } = require('node:child_process');
const [bin, cwd] = process.argv.slice(1);
const child = spawn(bin, ['app-server'], { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
let out = '';
const timer = setTimeout(() => { child.kill(); process.exit(2); }, 20000);
child.on('error', () => process.exit(3));
child.stdout.on('data', (d) => {
  out += d;
  const line = out.split('\\n').find((l) => l.includes('"id":2'));
  if (line) { clearTimeout(timer); process.stdout.write(line); child.kill(); }
});
child.stdin.write([
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"aep-steer","version":"1"}}}',
  '{"jsonrpc":"2.0","method":"initialized","params":{}}',
  JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'hooks/list', params: { cwds: [cwd] } }),
].join('\\n') + '\\n');
`;

export interface ListedHook {
  key: string;
  currentHash: string;
  command?: string;
  sourcePath?: string;
  /** `trusted`, `untrusted`, … as Codex sees the hook now. */
  trustStatus?: string;
}

/** The hooks Codex reports for a folder (`hooks/list` on a one-shot `codex app-server`), or why not. */
export function listCodexHooks(bin: string, env: NodeJS.ProcessEnv, cwd: string): ListedHook[] | string {
  const r = spawnSync(process.execPath, ['-e', HOOKS_LIST, bin, cwd], { env, encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0 || r.stdout === '') return `codex app-server did not list the hooks (exit ${String(r.status)})`;
  try {
    const answer = JSON.parse(r.stdout) as { result?: { data?: { hooks?: ListedHook[] }[] } };
    return (answer.result?.data ?? []).flatMap((d) => d.hooks ?? []);
  } catch {
    return 'codex app-server answered something unreadable';
  }
}

/** Removes the trust tables this installer wrote (header line marked, then its trusted_hash line). */
function withoutOurTrust(toml: string): string {
  const out: string[] = [];
  const lines = toml.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (/^\[hooks\.state\."[^"]*"\]/.test(line) && line.trimEnd().endsWith(TRUST_MARKER)) {
      if (/^trusted_hash\s*=/.test(lines[i + 1] ?? '')) i += 1;
      // The blank line written before each table goes with it.
      if (out.length > 0 && out[out.length - 1] === '') out.pop();
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

/**
 * Persists Codex's trust in the hooks just written: `[hooks.state."<key>"] trusted_hash` in
 * $CODEX_HOME/config.toml, with key and hash as Codex itself reports them (vendor-clis-observed §2.4).
 */
function trustOurHooks(file: string, opts: InstallOptions, env: NodeJS.ProcessEnv): string {
  const bin = codexBinary(env);
  if (bin === undefined) return CODEX_TRUST_NOTE;
  const cwd = opts.project === undefined ? dirname(file) : resolve(opts.project);
  const config = join(codexHomeOf(env), 'config.toml');
  const listed = listCodexHooks(bin, { ...process.env, ...env, CODEX_HOME: codexHomeOf(env) }, cwd);
  if (typeof listed === 'string') return `${listed}; ${CODEX_TRUST_NOTE}`;
  let ours = listed.filter(
    (h) =>
      h.sourcePath === file && typeof h.command === 'string' && isShimHook({ type: 'command', command: h.command }),
  );
  let folderNote = '';
  if (ours.length === 0 && opts.project !== undefined && !foldersTrustIn(config, cwd)) {
    // Codex lists no hook of a folder it has not been asked to trust yet (0.171.0), so the first
    // `codex` there would ask to review them. A scratch CODEX_HOME that trusts the folder reports
    // their keys and hashes (a key names the hooks file, never CODEX_HOME); only the hooks' trust
    // is written here: whether to trust the folder stays Codex's question to the person.
    const scratch = listedAsTrusted(bin, env, config, cwd);
    if (typeof scratch !== 'string') {
      ours = scratch.filter(
        (h) =>
          h.sourcePath === file && typeof h.command === 'string' && isShimHook({ type: 'command', command: h.command }),
      );
      folderNote = `; Codex has not trusted ${cwd} yet: its first start there asks "Trust this folder?", then runs the hooks`;
    }
  }
  if (ours.length === 0) return `codex did not report the hooks in ${file}; ${CODEX_TRUST_NOTE}`;
  const current = existsSync(config) ? readFileSync(config, 'utf8') : '';
  const tables = ours.map(
    (h) => `[hooks.state.${JSON.stringify(h.key)}]  ${TRUST_MARKER}\ntrusted_hash = ${JSON.stringify(h.currentHash)}`,
  );
  const kept = withoutOurTrust(current).replace(/\n+$/, '');
  writeTextFile(config, `${kept === '' ? '' : `${kept}\n\n`}${tables.join('\n\n')}\n`);
  return `trusted ${ours.length} hooks in ${config} (as reported by ${bin})${folderNote}`;
}

/** Whether config.toml has a trust entry for the folder (either way: the person's answer stands). */
function foldersTrustIn(config: string, cwd: string): boolean {
  if (!existsSync(config)) return false;
  return readFileSync(config, 'utf8').includes(`[projects.${JSON.stringify(cwd)}]`);
}

/** `hooks/list` as Codex answers it once the folder is trusted, from a scratch copy of the config. */
function listedAsTrusted(bin: string, env: NodeJS.ProcessEnv, config: string, cwd: string): ListedHook[] | string {
  const home = mkdtempSync(join(tmpdir(), 'aep-codex-trust-'));
  try {
    const copy = join(home, 'config.toml');
    if (existsSync(config)) copyFileSync(config, copy);
    const before = existsSync(copy) ? readFileSync(copy, 'utf8') : '';
    writeFileSync(copy, `${before}\n[projects.${JSON.stringify(cwd)}]\ntrust_level = "trusted"\n`);
    return listCodexHooks(bin, { ...process.env, ...env, CODEX_HOME: home }, cwd);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export function installCodex(opts: InstallOptions): InstallReport {
  const file = codexHooksPath(opts, opts.env);
  const url = shimTarget(opts);
  const group = (e: string) => ourGroup(e, url, opts.neutral, opts.attentionTimeoutMs);
  const { changed, added } = installJsonHooks(file, CODEX_EVENTS, group, isShimHook);
  const trust = trustOurHooks(file, opts, opts.env ?? process.env);
  return { file, changed, added, removed: [], notes: [trust, `every event runs the shim; ${secretNote(url)}`] };
}

export function uninstallCodex(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const report = uninstallJsonHooks(codexHooksPath(opts, opts.env), isShimHook);
  if (!report.changed) return report;
  const config = join(codexHomeOf(opts.env ?? process.env), 'config.toml');
  if (existsSync(config)) {
    const toml = readFileSync(config, 'utf8');
    const kept = withoutOurTrust(toml);
    if (kept !== toml) writeTextFile(config, kept);
  }
  return report;
}

export const codexInstaller: Installer = {
  install: installCodex,
  uninstall: uninstallCodex,
  file: codexHooksPath,
  describeTarget:
    '--project DIR writes DIR/.codex/hooks.json; --user (default) writes $CODEX_HOME/hooks.json or ~/.codex/hooks.json',
};
