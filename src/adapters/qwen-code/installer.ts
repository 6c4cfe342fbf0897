// Writes the adapter's HTTP hooks into Qwen Code's settings.json and takes them out again, keeping
// every other hook and setting. Qwen posts the hook JSON straight to the adapter: no shim (D15,
// vendor-surfaces §3.1). User-level settings run hooks with no trust step; project-level settings
// run only in a trusted folder (vendor-clis-observed §3.2).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hookUrl, secretNote, settingsFile, shimCommand, shimTarget } from '../install.js';
import type { InstallReport, ShimTarget } from '../install.js';
import { installJsonHooks, isAdapterHook, uninstallJsonHooks, type HookGroup } from '../hook-settings.js';
import type { InstallOptions, Installer } from '../table.js';

/**
 * Qwen Code 0.24.4 hook events, minus MessageDisplay (one request per streamed chunk: noise an
 * observer does not need, vendor-surfaces §3.2).
 */
export const QWEN_CODE_EVENTS = [
  'SessionStart',
  'SessionEnd',
  'SessionDelete',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'Stop',
  'StopFailure',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'PermissionRequest',
  'PermissionDenied',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'Notification',
  'TodoCreated',
  'TodoCompleted',
  'InstructionsLoaded',
] as const;

const MATCHED = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);
/** HTTP hook timeouts are seconds in 0.24.4 (HttpHookRunner multiplies by 1000). */
const HOOK_TIMEOUT_S = 10;
const HOOK_NAME = 'aep-steer';

/** `--project DIR` → DIR/.qwen/settings.json; otherwise ~/.qwen/settings.json. */
function qwenSettingsPath(
  opts: Pick<InstallOptions, 'project' | 'user'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return settingsFile(opts, '.qwen', 'settings.json', join(env.HOME || homedir(), '.qwen'));
}

/** Ours: an HTTP hook named aep-steer, any HTTP hook to a loopback `/hook/<secret>` URL, or the shim. */
const isOurQwenHook = (hook: unknown): boolean =>
  isAdapterHook(hook) ||
  (hook !== null &&
    typeof hook === 'object' &&
    (hook as Record<string, unknown>).type === 'http' &&
    (hook as Record<string, unknown>).name === HOOK_NAME);

/**
 * User settings get HTTP hooks (the URL carries the secret; the file is the user's own, mode 600).
 * A project's `.qwen/settings.json` is usually committed and Qwen Code has no local variant, so
 * there every event runs the shim, which reads the secret from the state directory (D21).
 */
function ourGroup(
  event: string,
  to: { url: string } | { shim: ShimTarget; neutral: unknown },
  attentionTimeoutMs: number,
): HookGroup {
  // A held loop waits up to the attention timeout (D14), so Qwen must wait longer.
  const timeout = event === 'PermissionRequest' ? Math.ceil(attentionTimeoutMs / 1000) + 10 : HOOK_TIMEOUT_S;
  const hook =
    'url' in to
      ? { type: 'http', url: to.url, name: HOOK_NAME, timeout }
      : { type: 'command', command: shimCommand(to.shim, to.neutral, timeout - 2), name: HOOK_NAME, timeout };
  return MATCHED.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] };
}

export function installQwenCode(opts: InstallOptions): InstallReport {
  const file = qwenSettingsPath(opts, opts.env);
  const shim = opts.project !== undefined ? shimTarget(opts) : undefined;
  const to = shim !== undefined ? { shim, neutral: opts.neutral } : { url: hookUrl(opts.port, opts.secret) };
  const group = (e: string) => ourGroup(e, to, opts.attentionTimeoutMs);
  const { changed, added } = installJsonHooks(file, QWEN_CODE_EVENTS, group, isOurQwenHook);
  const notes = [
    shim !== undefined
      ? `every event runs the shim, posting to http://127.0.0.1:${opts.port}/hook/<secret>; ${secretNote(shim)}`
      : `HTTP hooks to http://127.0.0.1:${opts.port}/hook/<secret> in ${file} (mode 600)`,
  ];
  if (opts.project !== undefined) notes.push('project settings hooks run only when Qwen Code trusts the folder');
  return { file, changed, added, removed: [], notes };
}

export const uninstallQwenCode = (opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport =>
  uninstallJsonHooks(qwenSettingsPath(opts, opts.env), isOurQwenHook);

export const qwenCodeInstaller: Installer = {
  install: installQwenCode,
  uninstall: uninstallQwenCode,
  file: qwenSettingsPath,
  describeTarget:
    '--project DIR writes DIR/.qwen/settings.json (trusted folders only); --user (default) writes ~/.qwen/settings.json',
};
