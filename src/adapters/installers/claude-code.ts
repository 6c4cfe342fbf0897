// Writes the adapter's hooks into Claude Code's settings.json and takes them out again, leaving
// every other hook and setting as it was. HTTP hooks where Claude Code allows them; the shim for
// SessionStart and Setup, where it skips HTTP hooks (vendor-clis-observed §1.4).
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SteeringError } from '../../protocol/errors.js';
import {
  hookUrl, readJsonObject, shimCommand, writeJsonObject, type InstallReport,
} from '../install.js';
import type { InstallOptions, Installer } from '../table.js';

/**
 * Hook events of Claude Code 2.1.332 (vendor-clis-observed §1.4), minus WorktreeCreate and
 * WorktreeRemove: a hook there replaces Claude Code's own worktree handling, which an observer must
 * never do.
 */
export const CLAUDE_CODE_EVENTS = [
  'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'Notification', 'UserPromptSubmit',
  'UserPromptExpansion', 'SessionStart', 'SessionEnd', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop',
  'PreCompact', 'PostCompact', 'PreModelSwitch', 'PostModelSwitch', 'PermissionRequest', 'PermissionDenied',
  'Setup', 'TeammateIdle', 'TaskCreated', 'TaskCompleted', 'Elicitation', 'ElicitationResult', 'ConfigChange',
  'InstructionsLoaded', 'CwdChanged', 'FileChanged', 'DirectoryAdded', 'MessageDisplay', 'PreSkillShellCommand',
] as const;

/** Events where Claude Code runs no HTTP hook (debug log: "HTTP hooks are not supported for SessionStart"). */
const COMMAND_ONLY = new Set(['SessionStart', 'Setup']);
/** Tool events take a matcher (§1.4). */
const MATCHED = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);
/** Held loops wait up to the attention timeout (D14), so their hook timeout must be longer. */
const HELD = new Set(['PermissionRequest', 'Elicitation']);

const HOOK_TIMEOUT_S = 10;
const SHIM_TIMEOUT_S = 5;

type Hook = Record<string, unknown>;
type Group = { matcher?: string; hooks?: Hook[]; [k: string]: unknown };

/** Settings file: `--project DIR` → DIR/.claude/settings.json; `--user` → $CLAUDE_CONFIG_DIR or ~/.claude. */
export function settingsPath(opts: Pick<InstallOptions, 'project' | 'user'>, env: NodeJS.ProcessEnv = process.env): string {
  if (opts.project !== undefined && opts.user === true) throw new SteeringError('CONFIG_INVALID', 'choose --project DIR or --user, not both');
  if (opts.project !== undefined) return join(resolve(opts.project), '.claude', 'settings.json');
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), 'settings.json');
}

/** Ours: an HTTP hook to a loopback `/hook/<secret>` URL, or a command running the shim. */
export function isOurHook(hook: unknown): boolean {
  if (hook === null || typeof hook !== 'object') return false;
  const h = hook as Hook;
  if (h.type === 'http' && typeof h.url === 'string') return /^http:\/\/127\.0\.0\.1:\d+\/hook\/[A-Za-z0-9_-]+$/.test(h.url);
  if (h.type === 'command' && typeof h.command === 'string') return h.command.includes('aep-steer-hook.sh');
  return false;
}

function ourHook(event: string, url: string, neutral: unknown, attentionTimeoutMs: number): Hook {
  if (COMMAND_ONLY.has(event)) return { type: 'command', command: shimCommand(url, neutral, SHIM_TIMEOUT_S), timeout: SHIM_TIMEOUT_S + 1 };
  const timeout = HELD.has(event) ? Math.ceil(attentionTimeoutMs / 1000) + 10 : HOOK_TIMEOUT_S;
  return { type: 'http', url, timeout };
}

/** Removes our hooks from one event's groups; drops groups left empty. */
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
    const hooks = group.hooks!.filter((h) => !isOurHook(h));
    removed += group.hooks!.length - hooks.length;
    if (hooks.length > 0) kept.push({ ...group, hooks });
    else if (group.hooks!.length === 0) kept.push(group);
  }
  return { kept, removed };
}

function hooksOf(settings: Record<string, unknown>, file: string): Record<string, unknown> {
  const hooks = settings.hooks ?? {};
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) {
    throw new SteeringError('CONFIG_INVALID', `${file}: "hooks" is not an object; nothing was changed`);
  }
  return { ...(hooks as Record<string, unknown>) };
}

export function installClaudeCode(opts: InstallOptions): InstallReport {
  const file = settingsPath(opts, opts.env);
  const settings = readJsonObject(file);
  const before = JSON.stringify(settings);
  const hooks = hooksOf(settings, file);
  const url = hookUrl(opts.port, opts.secret);
  const added: string[] = [];
  for (const event of CLAUDE_CODE_EVENTS) {
    const { kept, removed: n } = withoutOurs(hooks[event]);
    const group: Group = MATCHED.has(event) ? { matcher: '*', hooks: [] } : { hooks: [] };
    group.hooks!.push(ourHook(event, url, opts.neutral, opts.attentionTimeoutMs));
    hooks[event] = [...kept, group];
    if (n === 0) added.push(event);
  }
  const next = { ...settings, hooks };
  const changed = JSON.stringify(next) !== before;
  if (changed) writeJsonObject(file, next);
  const notes = [`hook URL http://127.0.0.1:${opts.port}/hook/<secret>; SessionStart and Setup run the shim`];
  return { file, changed, added: changed ? added : [], removed: [], notes };
}

export function uninstallClaudeCode(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const file = settingsPath(opts, opts.env);
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

export const claudeCodeInstaller: Installer = {
  install: installClaudeCode,
  uninstall: uninstallClaudeCode,
  describeTarget: '--project DIR writes DIR/.claude/settings.json; --user (default) writes $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json',
};
