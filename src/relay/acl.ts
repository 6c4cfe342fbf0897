// Who may speak and who may command whom (AEP-0003 §8, AEP-0004 §4.1, D17–D20).
// Pure apart from `loadTokensFile`: the relay core asks `authenticate`, `mayCommand`, `mayEmit`
// and `ceilingFor`; every authorization rule of the relay is one of these functions.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { CAPTURE_LEVELS, captureRank, type CaptureLevel } from '../protocol/envelope.js';
import { SteeringError } from '../protocol/errors.js';
import { isSpawnType, WITHDRAW_GRANT } from '../protocol/types.js';

/** D19: the agents (and optionally sessions) a party may claim and publish session events for. */
interface EmitRight {
  agents: string[];
  sessions: string[];
}

/** What an authenticated (or anonymous) party may do. */
export interface Principal {
  /** Names the token holder in refusal details and logs; never the token itself. */
  identity: string;
  /** Command types this party may send (glob patterns); empty = watch-only (D18). */
  commands: string[];
  /** Session ids this party may command (glob patterns). */
  sessions: string[];
  /** D19: what this party may publish; empty = it may publish nothing. */
  emit: EmitRight[];
  /** D20: the most this party is served at, whatever its subscriptions ask; absent = as emitted. */
  capture?: CaptureLevel;
  /** D32: sessions (globs) in which this party may withdraw any sender's instruction; empty = only its own. */
  withdraw?: string[];
  /** D45: may start sessions (`x.{vendor}.control.spawn`); off unless its tokens-file entry says `"spawn": true`. */
  spawn?: boolean;
  /** D47: may read the store's rows whole for `audit --verify --relay` (every event at full capture). */
  audit?: boolean;
  /**
   * True for a tokens-file identity: its commands must carry `agent` = `identity`, and its claims
   * are its own (D19). The shared token and a tokenless relay serve one user, so several of their
   * connections may claim one session (AEP's `ambiguous`), and their `agent` is the sender's word.
   */
  bound: boolean;
  /** False only for the tokenless relay's anonymous party: control needs an authenticated binding. */
  authenticated: boolean;
}

/** One entry of the tokens file (D18). Either `token` or its `sha256` hex digest. */
export interface TokenEntry {
  token?: string;
  sha256?: string;
  identity: string;
  commands?: string[];
  sessions?: string[];
  /** Agent globs, or `{agents, sessions?}` (D19). */
  emit?: EmitRight[];
  capture?: CaptureLevel;
  /** D32: session globs in which this identity may withdraw others' instructions. */
  withdraw?: string[];
  /** D45: the spawn right, off by default. */
  spawn?: boolean;
  /** D47: the right to read the store's rows for a remote verify, off by default. */
  audit?: boolean;
}

export interface AccessPolicy {
  /** True when any token is configured: then every surface but /healthz needs one. */
  required: boolean;
  authenticate(token: string | undefined): Principal | undefined;
}

const EVERYTHING: EmitRight[] = [{ agents: ['*'], sessions: ['*'] }];

/** The party a tokenless relay serves: it may watch and emit, never command (AEP-0004 §4.1). */
const ANONYMOUS: Principal = Object.freeze({
  identity: 'anonymous',
  commands: [],
  sessions: [],
  emit: EVERYTHING,
  bound: false,
  authenticated: false,
}) as Principal;

/** The single shared token (`--token`): full rights, one-user local mode (D19). */
const SHARED: Principal = Object.freeze({
  identity: 'shared-token',
  commands: ['*'],
  sessions: ['*'],
  emit: EVERYTHING,
  withdraw: ['*'],
  // The one user's own token: the adapter's `--spawn-root` is what turns spawning on.
  spawn: true,
  audit: true,
  bound: false,
  authenticated: true,
}) as Principal;

/** D20: a watch-only entry (no commands, no emit) without its own ceiling is served at `metadata`. */
function principalOf(entry: TokenEntry): Principal {
  const commands = entry.commands ?? [];
  const emit = entry.emit ?? [];
  const p: Principal = {
    identity: entry.identity,
    commands,
    sessions: entry.sessions ?? ['*'],
    emit,
    bound: true,
    authenticated: true,
  };
  if (entry.withdraw !== undefined && entry.withdraw.length > 0) p.withdraw = entry.withdraw;
  if (entry.spawn === true) p.spawn = true;
  if (entry.audit === true) p.audit = true;
  const capture = entry.capture ?? (commands.length === 0 && emit.length === 0 ? 'metadata' : undefined);
  if (capture !== undefined) p.capture = capture;
  return p;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Builds the policy from a single shared token (full control rights) and/or tokens-file
 * entries. Every configured digest is compared with `timingSafeEqual` over equal-length
 * SHA-256 digests, and all of them are compared, so timing does not tell which one matched.
 */
export function accessPolicy(opts: { token?: string; entries?: TokenEntry[]; fromFile?: boolean }): AccessPolicy {
  // D39: a relay serving a tokens file needs a token even when the file lists none (all revoked).
  const required = opts.fromFile === true;
  const table: { digest: Buffer; principal: Principal }[] = [];
  if (opts.token !== undefined && opts.token !== '') {
    table.push({ digest: digest(opts.token), principal: SHARED });
  }
  for (const entry of opts.entries ?? []) {
    const d = entry.token !== undefined ? digest(entry.token) : Buffer.from(entry.sha256 ?? '', 'hex');
    table.push({ digest: d, principal: principalOf(entry) });
  }
  return {
    required: required || table.length > 0,
    authenticate(token) {
      if (table.length === 0) return required ? undefined : ANONYMOUS;
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

/** D39: whether a reloaded tokens file left a party's rights exactly as they were. */
export function samePrincipal(a: Principal, b: Principal): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

const compiled = new Map<string, RegExp>();

/** `*` stands for any run of characters (dots included); everything else is literal. */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  let re = compiled.get(pattern);
  if (re === undefined) {
    // Patterns come from the tokens file (a bounded set): compile each once, not per event.
    re = new RegExp(
      `^${pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    compiled.set(pattern, re);
  }
  return re.test(value);
}

export type CommandVerdict = { ok: true } | { ok: false; detail: string };

/** The one yes, shared: every relayed event is asked, and a fresh object per answer is garbage. */
const YES: CommandVerdict = Object.freeze({ ok: true });

/**
 * D18: a command passes when both its type and its target session match the party's patterns;
 * D19: a bound party's command names it as the sender (`agent`), so the audit names who sent it.
 */
export function mayCommand(p: Principal, type: string, session: string, agent?: string): CommandVerdict {
  if (!p.authenticated) return { ok: false, detail: 'control needs an authenticated binding' };
  if (p.commands.length === 0) return { ok: false, detail: `${p.identity} is watch-only` };
  if (!p.commands.some((g) => globMatch(g, type))) return { ok: false, detail: `${p.identity} may not send ${type}` };
  if (!p.sessions.some((g) => globMatch(g, session)))
    return { ok: false, detail: `${p.identity} may not command session ${session}` };
  if (p.bound && agent !== undefined && agent !== p.identity) {
    return {
      ok: false,
      detail: `the command names "${agent}" as its sender; this token's identity is "${p.identity}"`,
    };
  }
  return YES;
}

/**
 * D45: a spawn starts a process on the adapter's machine, so `commands: ["*"]` is not enough: the
 * party's tokens-file entry must also say `"spawn": true`.
 */
export function maySpawn(p: Principal, type: string): CommandVerdict {
  if (!isSpawnType(type) || p.spawn === true) return YES;
  return {
    ok: false,
    detail: `${p.identity} has no spawn right; add "spawn": true to its entry in the relay's tokens file to let it start sessions`,
  };
}

/**
 * D32: a command claiming a withdraw grant (the `grant` attribute) passes only when it is a
 * withdraw and the party's tokens-file entry grants withdraw for the session; the adapter then
 * takes back any sender's instruction. D44: the queue verbs on one instruction carry the same right.
 * Without the attribute nothing changes.
 */
export function mayClaimGrant(p: Principal, type: string, session: string, grant: unknown): CommandVerdict {
  if (grant === undefined) return YES;
  if (grant !== WITHDRAW_GRANT || !/\.control\.(?:withdraw|edit|move|promote)$/.test(type)) {
    return {
      ok: false,
      detail: `the grant attribute names what a token was granted: only "${WITHDRAW_GRANT}", on a withdraw, edit, move or promote`,
    };
  }
  if (!(p.withdraw ?? []).some((g) => globMatch(g, session)))
    return { ok: false, detail: `${p.identity} is not granted withdraw for session ${session}` };
  return YES;
}

/** D19: publishing an event of `agent` (for `session`, when it has one) needs a matching emit right. */
export function mayEmit(p: Principal, agent: string, session: string | undefined): CommandVerdict {
  if (p.emit.length === 0) return { ok: false, detail: `${p.identity} may not publish events (no emit rights)` };
  const fits = p.emit.some(
    (r) =>
      r.agents.some((g) => globMatch(g, agent)) &&
      (session === undefined || r.sessions.some((g) => globMatch(g, session))),
  );
  if (!fits)
    return {
      ok: false,
      detail: `${p.identity} may not publish events of ${agent}${session === undefined ? '' : ` for session ${session}`}`,
    };
  return YES;
}

/** D20: a subscription's ceiling is the lower of what it asks and what its party may see. */
export function ceilingFor(p: Principal, asked: CaptureLevel | undefined): CaptureLevel | undefined {
  if (p.capture === undefined) return asked;
  if (asked === undefined) return p.capture;
  return captureRank(asked) <= captureRank(p.capture) ? asked : p.capture;
}

const HEX64 = /^[0-9a-f]{64}$/;
const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === 'string' && s !== '');

/**
 * Parses the tokens file (D18):
 * `{"tokens":[{"token"|"sha256", "identity", "commands"?, "sessions"?, "emit"?, "capture"?, "withdraw"?: [glob], "spawn"?: bool, "audit"?: bool}]}`.
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
    if (hasToken === hasDigest)
      throw new SteeringError('CONFIG_INVALID', `${at} needs exactly one of "token" or "sha256" (64 lowercase hex)`);
    if (typeof e.identity !== 'string' || e.identity === '')
      throw new SteeringError('CONFIG_INVALID', `${at} needs an "identity"`);
    for (const key of ['commands', 'sessions', 'withdraw'] as const) {
      if (e[key] !== undefined && !isStringArray(e[key]))
        throw new SteeringError('CONFIG_INVALID', `${at}.${key} must be an array of non-empty strings`);
    }
    for (const key of ['spawn', 'audit'] as const)
      if (e[key] !== undefined && typeof e[key] !== 'boolean')
        throw new SteeringError('CONFIG_INVALID', `${at}.${key} must be true or false`);
    if (e.capture !== undefined && !(CAPTURE_LEVELS as readonly unknown[]).includes(e.capture)) {
      throw new SteeringError('CONFIG_INVALID', `${at}.capture must be one of ${CAPTURE_LEVELS.join(', ')}`);
    }
    const out: TokenEntry = { identity: e.identity };
    if (hasToken) out.token = e.token as string;
    else out.sha256 = e.sha256 as string;
    if (e.commands !== undefined) out.commands = e.commands as string[];
    if (e.sessions !== undefined) out.sessions = e.sessions as string[];
    if (e.withdraw !== undefined) out.withdraw = e.withdraw as string[];
    if (e.emit !== undefined) out.emit = parseEmit(e.emit, `${at}.emit`);
    if (e.capture !== undefined) out.capture = e.capture as CaptureLevel;
    if (e.spawn === true) out.spawn = true;
    if (e.audit === true) out.audit = true;
    return out;
  });
}

/**
 * `emit`: an array of agent globs (`["claude-code"]`), or of `{agents, sessions?}` objects, or one
 * such object. Sessions default to every session.
 */
function parseEmit(v: unknown, at: string): EmitRight[] {
  const bad = (): never => {
    throw new SteeringError(
      'CONFIG_INVALID',
      `${at} must be agent globs (["claude-code"]) or {"agents": [glob], "sessions"?: [glob]}`,
    );
  };
  const one = (r: unknown): EmitRight => {
    if (typeof r === 'string' && r !== '') return { agents: [r], sessions: ['*'] };
    if (typeof r !== 'object' || r === null || Array.isArray(r)) return bad();
    const o = r as Record<string, unknown>;
    if (!isStringArray(o.agents) || o.agents.length === 0) return bad();
    if (o.sessions !== undefined && !isStringArray(o.sessions)) return bad();
    return { agents: o.agents, sessions: (o.sessions as string[] | undefined) ?? ['*'] };
  };
  if (Array.isArray(v)) {
    // A list of plain globs is one right over those agents.
    if (isStringArray(v)) return v.length === 0 ? [] : [{ agents: v, sessions: ['*'] }];
    return v.map(one);
  }
  return typeof v === 'string' ? bad() : [one(v)];
}

/**
 * D21: a tokens file anyone else on the machine can read (or write) hands out every token in it,
 * so it is refused rather than served. Windows has no POSIX modes to check.
 */
function checkPrivateFile(path: string, what: string): void {
  if (process.platform === 'win32') return;
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `${what} ${path} is readable or writable by other users (mode ${mode.toString(8).padStart(3, '0')}); run: chmod 600 ${path}`,
    );
  }
}

export function loadTokensFile(path: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new SteeringError('CONFIG_INVALID', `cannot read tokens file ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  checkPrivateFile(path, 'tokens file');
  return parseTokensFile(text, path);
}

/** The bearer token of a request: `Authorization: Bearer …`, else the `access_token` query parameter. */
export function bearerToken(authorization: string | undefined, query: URLSearchParams): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  if (m) return m[1]!.trim();
  return query.get('access_token') ?? undefined;
}
