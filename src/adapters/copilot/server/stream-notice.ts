// What `aep-steer run copilot` says before it hosts a session that will not show on the stream.
// The run joins the adapter's server lane, which steers; but the session enters the adapter's
// stream (its start, prompts and tools, so the relay lists it and `instruct --session` finds it)
// only through the project's Copilot hooks, and Copilot runs them only when the hook file is
// installed and it trusts the folder (copilot-opencode-observed §1: no hook fired untrusted).
// The run goes on either way (the session works, unsteered); the words say what to do.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { copilotInstaller } from '../installer.js';
import { folderTrust } from '../trust.js';

/** Why a session hosted in `cwd` will not show on the stream, and what to do; undefined when it will. */
export function hostedStreamNotice(cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  const dir = resolve(cwd);
  const hookFile = copilotInstaller.file({ project: dir });
  const reasons: string[] = [];
  const fixes: string[] = [];
  if (!existsSync(hookFile)) {
    reasons.push(`the project's Copilot hooks are not installed (${hookFile} is missing)`);
    fixes.push(`run \`aep-steer install copilot --project ${dir}\``);
  }
  const trust = folderTrust(dir, env);
  if (!trust.trusted) {
    reasons.push(trust.detail);
    if (trust.fix !== undefined) fixes.push(trust.fix);
  }
  if (reasons.length === 0) return undefined;
  return (
    'this Copilot session will not appear on the stream (the adapter learns of its start, prompts and tool ' +
    `calls only from the project's Copilot hooks): ${reasons.join('; and ')}. ` +
    `To fix: ${fixes.join('; then ')}, and start the run again`
  );
}
