// What installer and adapter daemon share: the state directory, the per-install secret (D15), the
// hook URL built from them, and the shim's location; and what the installers share: atomic writes,
// and merging or removing our hooks in a JSON settings file whose `hooks` maps an event to groups
// `{ matcher?, hooks: [...] }` (Claude Code, Codex, Qwen Code). Each vendor's data and differences
// live in its folder, adapters/<token>/installer.ts.
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

const ADAPTER_URL = /^http:\/\/127\.0\.0\.1:\d+\/hook\/[A-Za-z0-9_-]+$/;

type Hook = Record<string, unknown>;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

/** An HTTP hook posting to a loopback adapter URL `/hook/<secret>` (D15). */
export const isAdapterHttpHook = (hook: unknown): boolean =>
  isRecord(hook) && hook.type === 'http' && typeof hook.url === 'string' && ADAPTER_URL.test(hook.url);

/** A command hook running the shipped shim. */
export const isShimHook = (hook: unknown): boolean =>
  isRecord(hook) &&
  hook.type === 'command' &&
  typeof hook.command === 'string' &&
  hook.command.includes('aep-steer-hook.sh');

/** One event's hook group as it goes into the settings file. */
export type HookGroup = { matcher?: string; hooks: Hook[] };

/** Removes our hooks from one event's groups; drops groups that held only ours, keeps everything else. */
function withoutOurHooks(groups: unknown, isOurs: (hook: unknown) => boolean): { kept: unknown[]; removed: number } {
  if (!Array.isArray(groups)) return { kept: [], removed: 0 };
  let removed = 0;
  const kept: unknown[] = [];
  for (const g of groups) {
    if (!isRecord(g) || !Array.isArray(g.hooks)) {
      kept.push(g);
      continue;
    }
    const all = g.hooks as unknown[];
    const hooks = all.filter((h) => !isOurs(h));
    removed += all.length - hooks.length;
    if (hooks.length > 0 || all.length === 0) kept.push({ ...g, hooks });
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

/**
 * Puts one group of ours last under each event, replacing ours from an earlier install and keeping
 * every other hook and setting. Writes only when something changed; `added` names the events that
 * had none of ours before.
 */
export function installJsonHooks(
  file: string,
  groups: Iterable<readonly [string, HookGroup]>,
  isOurs: (hook: unknown) => boolean,
): { changed: boolean; added: string[] } {
  const settings = readJsonObject(file);
  const before = JSON.stringify(settings);
  const hooks = hooksOf(settings, file);
  const added: string[] = [];
  for (const [event, group] of groups) {
    const { kept, removed } = withoutOurHooks(hooks[event], isOurs);
    hooks[event] = [...kept, group];
    if (removed === 0) added.push(event);
  }
  const next = { ...settings, hooks };
  const changed = JSON.stringify(next) !== before;
  if (changed) writeJsonObject(file, next);
  return { changed, added: changed ? added : [] };
}

/** Takes our hooks out of every event, drops events and a `hooks` left empty, and reports what went. */
export function uninstallJsonHooks(file: string, isOurs: (hook: unknown) => boolean): InstallReport {
  const unchanged: InstallReport = { file, changed: false, added: [], removed: [], notes: [] };
  const settings = readJsonObject(file);
  if (settings.hooks === undefined) return unchanged;
  const hooks = hooksOf(settings, file);
  const removed: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    const { kept, removed: n } = withoutOurHooks(groups, isOurs);
    if (n === 0) continue;
    removed.push(event);
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (removed.length === 0) return unchanged;
  const next: Record<string, unknown> = { ...settings, hooks };
  if (Object.keys(hooks).length === 0) delete next.hooks;
  writeJsonObject(file, next);
  return { file, changed: true, added: [], removed, notes: [] };
}
