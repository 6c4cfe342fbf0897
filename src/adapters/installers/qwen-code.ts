// Writes the adapter's HTTP hooks into Qwen Code's settings.json and takes them out again, keeping
// every other hook and setting. Qwen posts the hook JSON straight to the adapter: no shim (D15,
// vendor-surfaces §3.1). User-level settings run hooks with no trust step; project-level settings
// run only in a trusted folder (vendor-clis-observed §3.2).
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SteeringError } from '../../protocol/errors.js';
import { hookUrl, readJsonObject, writeJsonObject, type InstallReport } from '../install.js';
import type { InstallOptions, Installer } from '../table.js';

/**
 * Qwen Code 0.24.4 hook events, minus MessageDisplay (one request per streamed chunk: noise an
 * observer does not need, vendor-surfaces §3.2).
 */
export const QWEN_CODE_EVENTS = [
  'SessionStart', 'SessionEnd', 'SessionDelete', 'UserPromptSubmit', 'UserPromptExpansion', 'Stop', 'StopFailure',
  'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'PermissionRequest', 'PermissionDenied',
  'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'Notification', 'TodoCreated', 'TodoCompleted',
  'InstructionsLoaded',
] as const;

const MATCHED = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);
/** HTTP hook timeouts are seconds in 0.24.4 (HttpHookRunner multiplies by 1000). */
const HOOK_TIMEOUT_S = 10;
const HOOK_NAME = 'aep-steer';

type Hook = Record<string, unknown>;
type Group = { matcher?: string; hooks?: Hook[]; [k: string]: unknown };

/** `--project DIR` → DIR/.qwen/settings.json; otherwise ~/.qwen/settings.json. */
export function qwenSettingsPath(opts: Pick<InstallOptions, 'project' | 'user'>, env: NodeJS.ProcessEnv = process.env): string {
  if (opts.project !== undefined && opts.user === true) throw new SteeringError('CONFIG_INVALID', 'choose --project DIR or --user, not both');
  if (opts.project !== undefined) return join(resolve(opts.project), '.qwen', 'settings.json');
  return join(env.HOME || homedir(), '.qwen', 'settings.json');
}

/** Ours: an HTTP hook named aep-steer, or any HTTP hook to a loopback `/hook/<secret>` URL. */
export const isOurQwenHook = (hook: unknown): boolean => {
  if (hook === null || typeof hook !== 'object') return false;
  const h = hook as Hook;
  return h.type === 'http' && (h.name === HOOK_NAME || (typeof h.url === 'string' && /^http:\/\/127\.0\.0\.1:\d+\/hook\/[A-Za-z0-9_-]+$/.test(h.url)));
};

function withoutOurs(groups: unknown): { kept: unknown[]; removed: number } {
  if (!Array.isArray(groups)) return { kept: [], removed: 0 };
  let removed = 0;
  const kept: unknown[] = [];
  for (const g of groups) {
    if (g === null || typeof g !== 'object' || !Array.isArray((g as Group).hooks)) {
      kept.push(g);
      continue;
    }
    const group = g as Group;
    const hooks = group.hooks!.filter((h) => !isOurQwenHook(h));
    removed += group.hooks!.length - hooks.length;
    if (hooks.length > 0 || group.hooks!.length === 0) kept.push({ ...group, hooks });
  }
  return { kept, removed };
}

function hooksOf(settings: Record<string, unknown>, path: string): Record<string, unknown> {
  const hooks = settings.hooks ?? {};
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) {
    throw new SteeringError('CONFIG_INVALID', `${path}: "hooks" is not an object; nothing was changed`);
  }
  return { ...(hooks as Record<string, unknown>) };
}

export function installQwenCode(opts: InstallOptions): InstallReport {
  const file = qwenSettingsPath(opts, opts.env);
  const settings = readJsonObject(file);
  const before = JSON.stringify(settings);
  const hooks = hooksOf(settings, file);
  const url = hookUrl(opts.port, opts.secret);
  const added: string[] = [];
  for (const event of QWEN_CODE_EVENTS) {
    const { kept, removed } = withoutOurs(hooks[event]);
    // A held loop waits up to the attention timeout (D14), so Qwen must wait longer.
    const timeout = event === 'PermissionRequest' ? Math.ceil(opts.attentionTimeoutMs / 1000) + 10 : HOOK_TIMEOUT_S;
    const hook: Hook = { type: 'http', url, name: HOOK_NAME, timeout };
    hooks[event] = [...kept, MATCHED.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }];
    if (removed === 0) added.push(event);
  }
  const next = { ...settings, hooks };
  const changed = JSON.stringify(next) !== before;
  if (changed) writeJsonObject(file, next);
  const notes = [`hook URL http://127.0.0.1:${opts.port}/hook/<secret> (HTTP hooks, no shim)`];
  if (opts.project !== undefined) notes.push('project settings hooks run only when Qwen Code trusts the folder');
  return { file, changed, added: changed ? added : [], removed: [], notes };
}

export function uninstallQwenCode(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const file = qwenSettingsPath(opts, opts.env);
  const settings = readJsonObject(file);
  if (settings.hooks === undefined) return { file, changed: false, added: [], removed: [], notes: [] };
  const hooks = hooksOf(settings, file);
  const removed: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    const { kept, removed: n } = withoutOurs(groups);
    if (n === 0) continue;
    removed.push(event);
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (removed.length === 0) return { file, changed: false, added: [], removed: [], notes: [] };
  const next: Record<string, unknown> = { ...settings, hooks };
  if (Object.keys(hooks).length === 0) delete next.hooks;
  writeJsonObject(file, next);
  return { file, changed: true, added: [], removed, notes: [] };
}

export const qwenCodeInstaller: Installer = {
  install: installQwenCode,
  uninstall: uninstallQwenCode,
  describeTarget: '--project DIR writes DIR/.qwen/settings.json (trusted folders only); --user (default) writes ~/.qwen/settings.json',
};
