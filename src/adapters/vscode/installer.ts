// Writes the adapter's command hooks (the shim, D15) as a workspace hooks file under .github/hooks/
// and removes it again. The file is the adapter's own, so no other hook is ever touched. The
// workspace-native file, not .claude/settings.json, gives VS Code sessions their own identity
// (vendor-surfaces §4.1).
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SteeringError } from '../../protocol/errors.js';
import {
  readJsonObject,
  secretNote,
  shimCommand,
  shimTarget,
  writeJsonObject,
  type InstallReport,
} from '../install.js';
import type { InstallOptions, Installer } from '../table.js';

/** The eight events of the VS Code hook target (vendor-surfaces §4.2). */
export const VSCODE_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PreCompact',
  'SubagentStart',
  'SubagentStop',
  'Stop',
] as const;

const VSCODE_HOOKS_FILE = 'aep-steer.json';
/** VS Code's default hook timeout (vendor-surfaces §4.1); the gate holds for less (D14: 25 s). */
const VENDOR_TIMEOUT_S = 30;
const SHIM_TIMEOUT_S = 5;

function vscodeHooksPath(opts: Pick<InstallOptions, 'project' | 'user'>): string {
  if (opts.user === true) {
    throw new SteeringError(
      'CONFIG_INVALID',
      'VS Code agent hooks are workspace hooks here: pass --project DIR (default: the current directory)',
    );
  }
  return join(resolve(opts.project ?? process.cwd()), '.github', 'hooks', VSCODE_HOOKS_FILE);
}

export function installVscode(opts: InstallOptions): InstallReport {
  const file = vscodeHooksPath(opts);
  const url = shimTarget(opts);
  const gateShim = Math.min(VENDOR_TIMEOUT_S - 2, Math.ceil(opts.attentionTimeoutMs / 1000) + 2);
  const hooks: Record<string, unknown> = {};
  for (const event of VSCODE_EVENTS) {
    // Only PreToolUse may be held (the opt-in gate); the shim must outlast the hold.
    const shim = event === 'PreToolUse' ? gateShim : SHIM_TIMEOUT_S;
    hooks[event] = [
      {
        type: 'command',
        command: shimCommand(url, opts.neutral, shim),
        timeout: event === 'PreToolUse' ? VENDOR_TIMEOUT_S : SHIM_TIMEOUT_S + 5,
      },
    ];
  }
  const next = { hooks };
  const before = existsSync(file) ? JSON.stringify(readJsonObject(file)) : undefined;
  const changed = before !== JSON.stringify(next);
  if (changed) writeJsonObject(file, next);
  const notes = [
    `every event runs the shim, posting to http://127.0.0.1:${opts.port}/hook/<secret>; ${secretNote(url)}`,
    'the held PreToolUse gate is opt-in: aep-steer adapter vscode --control (AEP_VSCODE_CONTROL=1); --gate-tools REGEX (AEP_VSCODE_GATE_TOOLS) narrows it',
  ];
  return { file, changed, added: changed ? [...VSCODE_EVENTS] : [], removed: [], notes };
}

export function uninstallVscode(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const file = vscodeHooksPath(opts);
  if (!existsSync(file)) return { file, changed: false, added: [], removed: [], notes: [] };
  const current = readJsonObject(file);
  const events =
    current.hooks !== null && typeof current.hooks === 'object' ? Object.keys(current.hooks as object) : [];
  rmSync(file);
  return { file, changed: true, added: [], removed: events, notes: [] };
}

export const vscodeInstaller: Installer = {
  install: installVscode,
  uninstall: uninstallVscode,
  file: vscodeHooksPath,
  describeTarget: `writes DIR/.github/hooks/${VSCODE_HOOKS_FILE} for --project DIR (default: the current directory)`,
};
