// Where this install keeps its state on disk, and how a private file there is written: the
// ground under the installers, the relay's local token and the service records alike.
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** `AEP_STATE_DIR`, else `~/.aep-steering` (the `HOME` of `env` when it names one). */
export const stateDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.AEP_STATE_DIR || join(env.HOME || homedir(), '.aep-steering');

/** Writes a file only its owner may read (mode 600, in a directory created 700), atomically. */
export function writePrivateFile(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}
