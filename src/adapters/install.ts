// What installer and adapter daemon share: the state directory, the per-install secret (D15), the
// hook URL built from them, and the shim's location. Vendor-specific settings writers live in
// adapters/installers/<token>.ts.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SteeringError } from '../protocol/errors.js';

/** `AEP_STATE_DIR`, else `~/.aep-steering`. */
export const stateDir = (env: NodeJS.ProcessEnv = process.env): string => env.AEP_STATE_DIR || join(homedir(), '.aep-steering');

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
    throw new SteeringError('CONFIG_INVALID', `the secret in ${path} is malformed; remove it to generate a new one`, { cause });
  }
}

/** Writes the secret with owner-only permissions (atomically, so a reader never sees half). */
export function writeSecret(secret: string, env: NodeJS.ProcessEnv = process.env): string {
  checkSecret(secret);
  const path = secretPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${secret}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}

/**
 * The per-install secret (D15): `given` when passed (and then stored, so the daemon uses it too),
 * else the stored one, else a new random one that is stored. Generated once, shared after.
 */
export function ensureSecret(given?: string, env: NodeJS.ProcessEnv = process.env): { secret: string; created: boolean } {
  if (given !== undefined) {
    checkSecret(given);
    const stored = readSecret(env);
    if (stored !== given) writeSecret(given, env);
    return { secret: given, created: stored !== given };
  }
  const stored = readSecret(env);
  if (stored !== undefined) return { secret: stored, created: false };
  const secret = randomBytes(24).toString('base64url');
  writeSecret(secret, env);
  return { secret, created: true };
}

/** The loopback hook URL a vendor posts to (D15: the secret is a path segment). */
export const hookUrl = (port: number, secret: string): string => `http://127.0.0.1:${port}/hook/${secret}`;

/** Absolute path of the command-hook shim shipped with the package. */
export const shimPath = (): string => join(dirname(fileURLToPath(import.meta.url)), 'shim', 'aep-steer-hook.sh');

/** Quotes one word for a POSIX shell command line. */
export const shellQuote = (s: string): string => (/^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command line that runs the shim for one vendor. */
export function shimCommand(url: string, neutral: unknown, totalSeconds: number): string {
  const args = [shimPath(), '-t', String(totalSeconds), url];
  if (neutral !== undefined) args.push(JSON.stringify(neutral));
  return args.map(shellQuote).join(' ');
}

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
    throw new SteeringError('CONFIG_INVALID', `${path} is not valid JSON; fix it first, nothing was changed`, { cause });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SteeringError('CONFIG_INVALID', `${path} does not hold a JSON object; nothing was changed`);
  }
  return value as Record<string, unknown>;
}

/** Writes JSON atomically (temp file + rename), keeping the file's mode when it existed. */
export function writeJsonObject(path: string, value: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}
