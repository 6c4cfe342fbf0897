// The local token (zero-config use on one machine): a relay started without `--token` or a tokens
// file creates one on first start in the state directory; local adapters and consumer commands
// read it when they talk to a loopback relay. Never sent to a relay on another host.
import { newSecret } from '../protocol/secret.js';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir } from '../protocol/state-dir.js';
import { SteeringError } from '../protocol/errors.js';

export const localTokenPath = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'token');

/** True for a relay URL on this machine's loopback interface. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === '127.0.0.1' || host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/** The stored local token, if a relay created one. */
export function readLocalToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = localTokenPath(env);
  if (!existsSync(path)) return undefined;
  const token = readFileSync(path, 'utf8').trim();
  return token === '' ? undefined : token;
}

/**
 * The local token, created when absent: mode 600 in a 700 directory (D21). Created with an
 * exclusive open, so a relay and an adapter starting together agree on one token.
 */
export function ensureLocalToken(env: NodeJS.ProcessEnv = process.env): {
  token: string;
  path: string;
  created: boolean;
} {
  const path = localTokenPath(env);
  const existing = readLocalToken(env);
  if (existing !== undefined) return { token: existing, path, created: false };
  const dir = stateDir(env);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  else if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  const token = newSecret(32);
  try {
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new SteeringError('CONFIG_INVALID', `cannot create the local token in ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const raced = readLocalToken(env);
    if (raced === undefined)
      throw new SteeringError('CONFIG_INVALID', `${path} is empty; remove it and start the relay again`);
    return { token: raced, path, created: false };
  }
  return { token, path, created: true };
}

/** The token to present: the one given, else the local token for a loopback relay. */
export function tokenFor(
  url: string,
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (given !== undefined && given !== '') return given;
  return isLoopbackUrl(url) ? readLocalToken(env) : undefined;
}

/** What to do about a token the relay refused. */
export const tokenHint = (env: NodeJS.ProcessEnv = process.env): string =>
  `pass the relay's token with --token or AEP_TOKEN; a relay started on this machine without --token keeps it in ${localTokenPath(env)}, which local commands read by themselves`;
