// Writes the adapter's hooks into Claude Code's settings (settings.local.json for a project) and takes them out again,
// leaving
// every other hook and setting as it was. Every event runs the command-hook shim: with the adapter
// stopped an HTTP hook is reported as a hook error under every hook, while the shim prints the
// neutral reply and exits 0, silently (its cost against an HTTP hook is in `npm run bench`).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { secretNote, settingsFile, shimCommand, shimTarget, type InstallReport, type ShimTarget } from '../install.js';
import { installJsonHooks, isAdapterHook, uninstallJsonHooks, type HookGroup } from '../hook-settings.js';
import type { InstallOptions, Installer } from '../table.js';

/**
 * Hook events of Claude Code 2.1.332 (vendor-clis-observed §1.4), minus WorktreeCreate and
 * WorktreeRemove: a hook there replaces Claude Code's own worktree handling, which an observer must
 * never do.
 */
export const CLAUDE_CODE_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Notification',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'SessionStart',
  'SessionEnd',
  'Stop',
  'StopFailure',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'PreModelSwitch',
  'PostModelSwitch',
  'PermissionRequest',
  'PermissionDenied',
  'Setup',
  'TeammateIdle',
  'TaskCreated',
  'TaskCompleted',
  'Elicitation',
  'ElicitationResult',
  'ConfigChange',
  'InstructionsLoaded',
  'CwdChanged',
  'FileChanged',
  'DirectoryAdded',
  'MessageDisplay',
  'PreSkillShellCommand',
] as const;

/** Tool events take a matcher (§1.4). */
const MATCHED = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);
/** Held loops wait up to the attention timeout (D14), so their hook timeout must be longer. */
const HELD = new Set(['PermissionRequest', 'Elicitation']);

const SHIM_TIMEOUT_S = 5;

/** Ours: an HTTP hook to a loopback `/hook/<secret>` URL, or a command running the shim. */
export const isOurHook = isAdapterHook;

/**
 * Settings file: `--project DIR` → DIR/.claude/settings.local.json, the project file Claude Code
 * keeps out of git, because the HTTP hook URLs carry the secret (D21); `--user` →
 * $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json.
 */
export function settingsPath(
  opts: Pick<InstallOptions, 'project' | 'user'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const userDir = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
  return opts.project !== undefined
    ? settingsFile(opts, '.claude', 'settings.local.json', userDir)
    : settingsFile(opts, '.claude', 'settings.json', userDir);
}

/** The project settings file that is usually committed: earlier releases installed there. */
const committedPath = (project: string): string => settingsFile({ project }, '.claude', 'settings.json', '');

function ourGroup(event: string, shim: ShimTarget, neutral: unknown, attentionTimeoutMs: number): HookGroup {
  const seconds = HELD.has(event) ? Math.ceil(attentionTimeoutMs / 1000) + 10 : SHIM_TIMEOUT_S;
  const hook = { type: 'command', command: shimCommand(shim, neutral, seconds), timeout: seconds + 1 };
  return MATCHED.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] };
}

export function installClaudeCode(opts: InstallOptions): InstallReport {
  const file = settingsPath(opts, opts.env);
  const shim = shimTarget(opts);
  const group = (e: string) => ourGroup(e, shim, opts.neutral, opts.attentionTimeoutMs);
  const { changed, added } = installJsonHooks(file, CLAUDE_CODE_EVENTS, group, isOurHook);
  const notes = [
    `every event runs the shim (silent while the adapter is stopped), posting to http://127.0.0.1:${opts.port}/hook/<secret>${opts.project !== undefined ? `; ${file} is the project file Claude Code keeps out of git` : ''}`,
    secretNote(shim),
  ];
  if (opts.project !== undefined) {
    // Hooks an earlier release put in the committed settings.json would leak the secret with it.
    const old = uninstallJsonHooks(committedPath(opts.project), isOurHook);
    if (old.changed)
      notes.push(`removed the adapter hooks an earlier install wrote into ${old.file} (they carried the secret)`);
  }
  return { file, changed, added, removed: [], notes };
}

export function uninstallClaudeCode(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const report = uninstallJsonHooks(settingsPath(opts, opts.env), isOurHook);
  if (opts.project === undefined) return report;
  const old = uninstallJsonHooks(committedPath(opts.project), isOurHook);
  return report.changed || !old.changed ? report : old;
}

export const claudeCodeInstaller: Installer = {
  install: installClaudeCode,
  uninstall: uninstallClaudeCode,
  file: settingsPath,
  describeTarget:
    '--project DIR writes DIR/.claude/settings.local.json (kept out of git); --user (default) writes $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json',
};
