// Who may speak and who may command whom (AEP-0003 §8, AEP-0004 §4.1, D17, D18).
// Pure apart from `loadTokensFile`: the server asks `authenticate` and `mayCommand`.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SteeringError } from '../protocol/errors.js';

/** What an authenticated (or anonymous) party may do. */
export interface Principal {
  /** Names the token holder in refusal details and logs; never the token itself. */
  identity: string;
  /** Command types this party may send (glob patterns); empty = watch-only (D18). */
  commands: string[];
  /** Session ids this party may command (glob patterns). */
  sessions: string[];
}

/** One entry of the tokens file (D18). Either `token` or its `sha256` hex digest. */
export interface TokenEntry {
  token?: string;
  sha256?: string;
  identity: string;
  commands?: string[];
  sessions?: string[];
}

export interface AccessPolicy {
  /** True when any token is configured: then every surface but /healthz needs one. */
  required: boolean;
  authenticate(token: string | undefined): Principal | undefined;
}

/** The party a tokenless relay serves: it may watch and emit, never command (AEP-0004 §4.1). */
export const ANONYMOUS: Principal = Object.freeze({ identity: 'anonymous', commands: [], sessions: [] }) as Principal;

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Builds the policy from a single shared token (full control rights) and/or tokens-file
 * entries. Every configured digest is compared with `timingSafeEqual` over equal-length
 * SHA-256 digests, and all of them are compared, so timing does not tell which one matched.
 */
export function accessPolicy(opts: { token?: string; entries?: TokenEntry[] }): AccessPolicy {
  const table: { digest: Buffer; principal: Principal }[] = [];
  if (opts.token !== undefined && opts.token !== '') {
    table.push({ digest: digest(opts.token), principal: { identity: 'shared-token', commands: ['*'], sessions: ['*'] } });
  }
  for (const entry of opts.entries ?? []) {
    const d = entry.token !== undefined ? digest(entry.token) : Buffer.from(entry.sha256 ?? '', 'hex');
    table.push({ digest: d, principal: { identity: entry.identity, commands: entry.commands ?? [], sessions: entry.sessions ?? ['*'] } });
  }
  return {
    required: table.length > 0,
    authenticate(token) {
      if (table.length === 0) return ANONYMOUS;
      if (token === undefined || token === '') return undefined;
      const d = digest(token);
      let found: Principal | undefined;
      for (const row of table) {
        const same = row.digest.length === d.length && timingSafeEqual(row.digest, d);
        if (same && found === undefined) found = row.principal;
      }
      return found;
    },
  };
}

/** `*` stands for any run of characters (dots included); everything else is literal. */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(value);
}

export type CommandVerdict = { ok: true } | { ok: false; detail: string };

/** D18: a command passes when both its type and its target session match the party's patterns. */
export function mayCommand(p: Principal, type: string, session: string): CommandVerdict {
  if (p.commands.length === 0) return { ok: false, detail: `${p.identity} is watch-only` };
  if (!p.commands.some((g) => globMatch(g, type))) return { ok: false, detail: `${p.identity} may not send ${type}` };
  if (!p.sessions.some((g) => globMatch(g, session))) return { ok: false, detail: `${p.identity} may not command session ${session}` };
  return { ok: true };
}

const HEX64 = /^[0-9a-f]{64}$/;
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string' && s !== '');

/**
 * Parses the tokens file (D18):
 * `{"tokens":[{"token"|"sha256", "identity", "commands"?: [glob], "sessions"?: [glob]}]}`.
 * A bad file is a CONFIG_INVALID error naming the entry, never a silently open relay.
 */
export function parseTokensFile(text: string, where = 'tokens file'): TokenEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new SteeringError('CONFIG_INVALID', `${where}: not JSON (${(err as Error).message})`);
  }
  const list = (doc as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(list)) throw new SteeringError('CONFIG_INVALID', `${where}: expected {"tokens": [...]}`);
  return list.map((raw, i): TokenEntry => {
    const at = `${where}: tokens[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw new SteeringError('CONFIG_INVALID', `${at} is not an object`);
    const e = raw as Record<string, unknown>;
    const hasToken = typeof e.token === 'string' && e.token !== '';
    const hasDigest = typeof e.sha256 === 'string' && HEX64.test(e.sha256);
    if (hasToken === hasDigest) throw new SteeringError('CONFIG_INVALID', `${at} needs exactly one of "token" or "sha256" (64 lowercase hex)`);
    if (typeof e.identity !== 'string' || e.identity === '') throw new SteeringError('CONFIG_INVALID', `${at} needs an "identity"`);
    for (const key of ['commands', 'sessions'] as const) {
      if (e[key] !== undefined && !isStringArray(e[key])) throw new SteeringError('CONFIG_INVALID', `${at}.${key} must be an array of non-empty strings`);
    }
    const out: TokenEntry = { identity: e.identity };
    if (hasToken) out.token = e.token as string;
    else out.sha256 = e.sha256 as string;
    if (e.commands !== undefined) out.commands = e.commands as string[];
    if (e.sessions !== undefined) out.sessions = e.sessions as string[];
    return out;
  });
}

export function loadTokensFile(path: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SteeringError('CONFIG_INVALID', `cannot read tokens file ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseTokensFile(text, path);
}

/** The bearer token of a request: `Authorization: Bearer …`, else the `access_token` query parameter. */
export function bearerToken(authorization: string | undefined, query: URLSearchParams): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  if (m) return m[1]!.trim();
  return query.get('access_token') ?? undefined;
}
