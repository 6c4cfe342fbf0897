// Whether GitHub Copilot CLI runs a folder's repository hooks: only in a trusted folder (observed
// on 1.0.102: no hook fired without trust; `--trust-folder` for one run, `trustedFolders` in the
// user's `~/.copilot/config.json` for every run, or COPILOT_ALLOW_ALL=true). The config file
// starts with `//` comment lines, so it is read as JSON after them.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The user's Copilot config file (COPILOT_HOME moves the whole directory). */
const copilotConfigPath = (env: NodeJS.ProcessEnv): string =>
  join(env.COPILOT_HOME || join(env.HOME || homedir(), '.copilot'), 'config.json');

/** The folders the config trusts; empty where the file is missing or unreadable. */
function trustedFolders(env: NodeJS.ProcessEnv): string[] {
  let text: string;
  try {
    text = readFileSync(copilotConfigPath(env), 'utf8');
  } catch {
    return [];
  }
  const body = text.replace(/^\s*\/\/.*$/gm, '');
  try {
    const value = JSON.parse(body) as { trustedFolders?: unknown };
    return Array.isArray(value.trustedFolders) ? value.trustedFolders.filter((f) => typeof f === 'string') : [];
  } catch {
    return [];
  }
}

export interface FolderTrust {
  trusted: boolean;
  /** Why, in one sentence. */
  detail: string;
  /** What makes the folder trusted (present when it is not). */
  fix?: string;
}

/** Whether Copilot trusts `folder`, so that its `.github/hooks/*.json` run. */
export function folderTrust(folder: string, env: NodeJS.ProcessEnv): FolderTrust {
  const dir = resolve(folder);
  const config = copilotConfigPath(env);
  if (env.COPILOT_ALLOW_ALL === 'true')
    return { trusted: true, detail: 'COPILOT_ALLOW_ALL=true trusts every folder, so its repository hooks run' };
  if (trustedFolders(env).some((f) => resolve(f) === dir))
    return { trusted: true, detail: `${dir} is among trustedFolders in ${config}, so its repository hooks run` };
  return {
    trusted: false,
    detail: `${dir} is not trusted by Copilot CLI (not in trustedFolders of ${config}): its repository hooks will not fire`,
    fix: `start \`copilot\` in ${dir} once and choose to trust the folder, or add "${dir}" to trustedFolders in ${config}, or run \`copilot --trust-folder\``,
  };
}
