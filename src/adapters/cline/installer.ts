// Writes Cline's ten hook files (executables named after the events) into `$CLINE_DIR/hooks/`
// (--user, default `~/.cline`) or the workspace's `.clinerules/hooks/` (--project DIR), each
// running the shim (D15, failing open). The hook secret is never written into them: each file
// reads it from the state directory when it runs (D21), so a workspace file can be committed.
// Files this installer did not write are never overwritten or removed.
import { chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SteeringError } from '../../protocol/errors.js';
import { secretPath, shellQuote, shimPath, writeTextFile, type InstallReport } from '../install.js';
import type { InstallOptions, Installer } from '../table.js';

export const CLINE_EVENTS = [
  'TaskStart',
  'TaskResume',
  'TaskCancel',
  'TaskComplete',
  'TaskError',
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'PreCompact',
  'SessionShutdown',
] as const;

const CLINE_MARKER = '# aep-steer: Cline hook';
/** Blocking hooks wait for the reply; the others are detached, so a short limit is enough. */
const SHIM_TIMEOUT_S = 5;

export function clineHooksDir(
  opts: Pick<InstallOptions, 'project' | 'user'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (opts.project !== undefined && opts.user === true)
    throw new SteeringError('CONFIG_INVALID', 'choose --project DIR or --user, not both');
  if (opts.project !== undefined) return join(resolve(opts.project), '.clinerules', 'hooks');
  return join(env.CLINE_DIR || join(env.HOME || homedir(), '.cline'), 'hooks');
}

/** One hook file: the secret is read at run time, so the file holds none (D21). */
function clineHookScript(port: number, neutral: unknown, env: NodeJS.ProcessEnv = process.env): string {
  return [
    '#!/bin/sh',
    `${CLINE_MARKER} (aep-steer install cline; aep-steer uninstall cline removes it)`,
    // -k: the shim reads the secret (so no process list shows it) and traces failed hooks next to it.
    `exec ${shellQuote(shimPath())} -t ${SHIM_TIMEOUT_S} -k ${shellQuote(secretPath(env))} ` +
      `http://127.0.0.1:${port}/hook/ ${shellQuote(JSON.stringify(neutral))}`,
    '',
  ].join('\n');
}

const ours = (file: string): boolean => existsSync(file) && readFileSync(file, 'utf8').includes(CLINE_MARKER);

export function installCline(opts: InstallOptions): InstallReport {
  const dir = clineHooksDir(opts, opts.env);
  const script = clineHookScript(opts.port, opts.neutral, opts.env);
  const added: string[] = [];
  const notes: string[] = [];
  let changed = false;
  for (const event of CLINE_EVENTS) {
    const file = join(dir, event);
    if (existsSync(file) && !ours(file)) {
      notes.push(`${file} exists and is not ours; left as it is (move it aside to let the adapter observe ${event})`);
      continue;
    }
    const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (before !== script) {
      writeTextFile(file, script);
      changed = true;
      if (before === undefined) added.push(event);
    }
    chmodSync(file, 0o755);
  }
  notes.push(
    `hook files in ${dir} run the shim to http://127.0.0.1:${opts.port}/hook/<secret from ${secretPath(opts.env)}>`,
  );
  notes.push(
    'send_input, control.cancel and approvals go through the Cline hub: AEP_CLINE_HUB=1 (observe) and AEP_CLINE_HUB_CONTROL=1 (control)',
  );
  return { file: dir, changed, added, removed: [], notes };
}

export function uninstallCline(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const dir = clineHooksDir(opts, opts.env);
  const removed: string[] = [];
  for (const event of CLINE_EVENTS) {
    const file = join(dir, event);
    if (!ours(file)) continue;
    rmSync(file);
    removed.push(event);
  }
  return { file: dir, changed: removed.length > 0, added: [], removed, notes: [] };
}

export const clineInstaller: Installer = {
  install: installCline,
  uninstall: uninstallCline,
  // The blocking hook, the one that carries instructions: `aep-steer doctor` checks it.
  file: (opts, env) => join(clineHooksDir(opts, env), 'PreToolUse'),
  describeTarget:
    'writes ten hook files into $CLINE_DIR/hooks (--user, default ~/.cline) or DIR/.clinerules/hooks (--project DIR)',
};
