// Writes the adapter's command hooks as a repository hook file of GitHub Copilot CLI,
// `<project>/.github/hooks/aep-steer.json` (`{version: 1, hooks: {<event>: [{type, bash,
// timeoutSec}]}}`, copilot-opencode-observed §1), and takes it out again. The file is the adapter's
// own, so every other hook file is left alone. Copilot's hook input does not name its event, so each
// command adds `hook_event_name` before the shim posts it (D15, D21: the shim reads the secret from
// the state directory). Hooks run only in a folder Copilot trusts (trust.ts): the report says so.
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SteeringError } from '../../protocol/errors.js';
import { readJsonObject, secretNote, shellQuote, shimCommand, shimTarget, writeJsonObject } from '../install.js';
import type { InstallReport } from '../install.js';
import type { InstallOptions, Installer } from '../table.js';
import { folderTrust } from './trust.js';

/** The 14 events Copilot CLI 1.0.102 runs command hooks for (copilot-opencode-observed §1). */
export const COPILOT_EVENTS = [
  'sessionStart',
  'sessionEnd',
  'userPromptSubmitted',
  'preToolUse',
  'postToolUse',
  'postToolUseFailure',
  'errorOccurred',
  'agentStop',
  'subagentStart',
  'subagentStop',
  'preCompact',
  'permissionRequest',
  'notification',
  'preMcpToolCall',
] as const;

const HOOK_TIMEOUT_S = 10;
const FILE = 'aep-steer.json';

/** The project: `--project DIR`, else the current directory (Copilot has repository hooks only). */
function projectOf(opts: Pick<InstallOptions, 'project' | 'user'>): string {
  if (opts.user === true)
    throw new SteeringError(
      'CONFIG_INVALID',
      'Copilot CLI runs repository hooks only: leave out --user and give the project with --project DIR (its folder must be trusted)',
    );
  return resolve(opts.project ?? process.cwd());
}

const copilotHookFile = (opts: Pick<InstallOptions, 'project' | 'user'>): string =>
  join(projectOf(opts), '.github', 'hooks', FILE);

/** The hook's command: the event's name put first into the input object, then the shim. */
export function eventCommand(event: string, shim: string): string {
  const sed = `1s/^[[:space:]]*{/{"hook_event_name":"${event}",/`;
  return `sed ${shellQuote(sed)} | ${shim}`;
}

function installCopilot(opts: InstallOptions): InstallReport {
  const file = copilotHookFile(opts);
  const target = shimTarget(opts);
  const hooks = Object.fromEntries(
    COPILOT_EVENTS.map((e) => {
      // A held permission request waits up to the attention timeout (D14), so Copilot must wait longer.
      const timeout = e === 'permissionRequest' ? Math.ceil(opts.attentionTimeoutMs / 1000) + 10 : HOOK_TIMEOUT_S;
      const shim = shimCommand(target, opts.neutral, timeout - 2);
      return [e, [{ type: 'command', bash: eventCommand(e, shim), timeoutSec: timeout }]];
    }),
  );
  const next = { version: 1, hooks };
  const before = existsSync(file) ? JSON.stringify(readJsonObject(file)) : undefined;
  const changed = before !== JSON.stringify(next);
  if (changed) writeJsonObject(file, next);
  const trust = folderTrust(projectOf(opts), opts.env ?? process.env);
  const notes = [
    `every event runs the shim, posting to http://127.0.0.1:${opts.port}/hook/<secret>; ${secretNote(target)}`,
    trust.trusted
      ? `Copilot CLI runs these hooks only in a trusted folder: ${trust.detail}`
      : `Copilot CLI runs these hooks only in a trusted folder, and ${trust.detail}; to trust it: ${trust.fix}`,
  ];
  return { file, changed, added: before === undefined ? [...COPILOT_EVENTS] : [], removed: [], notes };
}

function uninstallCopilot(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const file = copilotHookFile(opts);
  if (!existsSync(file)) return { file, changed: false, added: [], removed: [], notes: [] };
  const hooks = readJsonObject(file).hooks;
  rmSync(file, { force: true });
  const removed = hooks !== null && typeof hooks === 'object' ? Object.keys(hooks) : [];
  return { file, changed: true, added: [], removed, notes: [] };
}

export const copilotInstaller: Installer = {
  install: installCopilot,
  uninstall: uninstallCopilot,
  file: copilotHookFile,
  describeTarget:
    '--project DIR (default: the current directory) writes DIR/.github/hooks/aep-steer.json; Copilot runs it only in a trusted folder',
  checks: (opts, env) => {
    const t = folderTrust(projectOf(opts), env);
    return [{ name: 'folder trust', ok: t.trusted, detail: t.detail, ...(t.fix === undefined ? {} : { fix: t.fix }) }];
  },
};
