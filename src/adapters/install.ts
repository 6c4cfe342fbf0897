// What installer and adapter daemon share: the state directory, the per-install secret (D15), the
// hook URL built from them, and the shim's location; and what the installers share: atomic writes
// of JSON and text, and where a settings file goes. Merging our hooks into a JSON settings file is
// hook-settings.ts; each vendor's data and differences live in its folder, adapters/<token>/installer.ts.
import { newSecret } from '../protocol/secret.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SteeringError } from '../protocol/errors.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';

export const secretPath = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'secret');

const SECRET_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/** Checks a secret is usable as one URL path segment. */
export function checkSecret(secret: string): string {
  if (!SECRET_PATTERN.test(secret)) {
    throw new SteeringError('CONFIG_INVALID', 'the hook secret must be 16 to 128 characters of [A-Za-z0-9_-]');
  }
  return secret;
}

/** Reads the stored secret, if any. */
export function readSecret(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = secretPath(env);
  if (!existsSync(path)) return undefined;
  const secret = readFileSync(path, 'utf8').trim();
  try {
    return checkSecret(secret);
  } catch (cause) {
    throw new SteeringError('CONFIG_INVALID', `the secret in ${path} is malformed; remove it to generate a new one`, {
      cause,
    });
  }
}

/** Writes the secret with owner-only permissions (atomically, so a reader never sees half). */
export function writeSecret(secret: string, env: NodeJS.ProcessEnv = process.env): string {
  checkSecret(secret);
  return writePrivateFile(secretPath(env), `${secret}\n`);
}

/**
 * The per-install secret (D15): `given` when passed (and then stored, so the daemon uses it too),
 * else the stored one, else a new random one that is stored. Generated once, shared after.
 */
export function ensureSecret(
  given?: string,
  env: NodeJS.ProcessEnv = process.env,
): { secret: string; created: boolean } {
  if (given !== undefined) {
    checkSecret(given);
    const stored = readSecret(env);
    if (stored !== given) writeSecret(given, env);
    return { secret: given, created: stored !== given };
  }
  const stored = readSecret(env);
  if (stored !== undefined) return { secret: stored, created: false };
  const secret = newSecret(32);
  writeSecret(secret, env);
  return { secret, created: true };
}

/** The loopback hook URL a vendor posts to (D15: the secret is a path segment). */
export const hookUrl = (port: number, secret: string): string => `http://127.0.0.1:${port}/hook/${secret}`;

/** Absolute path of the command-hook shim shipped with the package. */
export const shimPath = (): string => join(dirname(fileURLToPath(import.meta.url)), 'shim', 'aep-steer-hook.sh');

/** Quotes one word for a POSIX shell command line. */
export const shellQuote = (s: string): string =>
  /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Where a command hook posts (D21): the hook URL up to its secret, and the file in the state
 * directory the shim reads the secret from, so no hook command line (in a settings file a
 * project commits, or in `ps` output) carries the secret.
 */
export interface ShimTarget {
  base: string;
  secretFile: string;
}

/**
 * The shim target of an install. The secret itself is stored by whoever chose it
 * (`ensureSecret`: `aep-steer install`, the adapter), in the state directory of `env`.
 */
export const shimTarget = (opts: { port: number; env?: NodeJS.ProcessEnv }): ShimTarget => ({
  base: `http://127.0.0.1:${opts.port}/hook/`,
  secretFile: secretPath(opts.env ?? process.env),
});

/** The command line that runs the shim for one vendor. */
export function shimCommand(target: ShimTarget, neutral: unknown, totalSeconds: number): string {
  const args = [shimPath(), '-t', String(totalSeconds), '-k', target.secretFile, target.base];
  if (neutral !== undefined) args.push(JSON.stringify(neutral));
  return args.map(shellQuote).join(' ');
}

/** The report line that says where the secret lives and who reads it (`aep-steer install` prints it). */
export const secretNote = (target: ShimTarget): string =>
  `the hook secret stays in ${target.secretFile} (mode 600); the shim reads it from there, so no hook command carries it`;

/** Result of an install or uninstall: the file touched and what changed, for printing. */
export interface InstallReport {
  file: string;
  changed: boolean;
  added: string[];
  removed: string[];
  notes: string[];
}

/** Reads a JSON settings file; a missing file is `{}`, a malformed one is an error that writes nothing. */
export function readJsonObject(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, 'utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new SteeringError('CONFIG_INVALID', `${path} is not valid JSON; fix it first, nothing was changed`, {
      cause,
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SteeringError('CONFIG_INVALID', `${path} does not hold a JSON object; nothing was changed`);
  }
  return value as Record<string, unknown>;
}

/**
 * Writes text atomically (temp file + rename), so a reader never sees half. Owner-only (D21):
 * the file mode 600, a directory this creates 700.
 */
export function writeTextFile(path: string, text: string): void {
  writePrivateFile(path, text);
}

/** Writes JSON atomically (temp file + rename). */
export const writeJsonObject = (path: string, value: Record<string, unknown>): void =>
  writeTextFile(path, `${JSON.stringify(value, null, 2)}\n`);

/** Where a JSON settings install goes: `--project DIR` → DIR/<projectDir>/<name>; otherwise `<userDir>/<name>`. */
export function settingsFile(
  opts: { project?: string; user?: boolean },
  projectDir: string,
  name: string,
  userDir: string,
): string {
  if (opts.project !== undefined && opts.user === true)
    throw new SteeringError('CONFIG_INVALID', 'choose --project DIR or --user, not both');
  if (opts.project !== undefined) return join(resolve(opts.project), projectDir, name);
  return join(userDir, name);
}
