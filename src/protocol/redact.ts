// The AEP-0003 §9.4 redaction pipeline, applied in its order: (a) secrets, (b) operator
// secrets, (c) home prefix, (d) PII. Beyond the normative floor it carries the hardening the
// conformance corpus expects (aep-wire.md §2.3 item 4); redacting more is always allowed.
import { homedir } from 'node:os';

export const SECRET = '[REDACTED:secret]';
export const PII = '[REDACTED:pii]';

export interface RedactOptions {
  /** The user's home prefix replaced by `~` (rule c). Default: this process's home directory. */
  home?: string;
  /** Operator-configured secret values, replaced wherever they occur (rule b). */
  secretValues?: readonly string[];
  /** Operator-configured secret names: `NAME=value` / `NAME: value` values are replaced (rule b). */
  secretNames?: readonly string[];
  /** PII redaction (rule d); on by default, operator-disableable. */
  pii?: boolean;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Rule (a) token shapes that need no key in front of them. */
const BARE_SECRETS: readonly RegExp[] = [
  // PEM blocks, any label; an unterminated block is redacted to the end of the text.
  /-----BEGIN [A-Z0-9 ]*-----[\s\S]*?(?:-----END [A-Z0-9 ]*-----|$)/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  // JWT: three base64url parts, the first a JSON header.
  /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{16,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b[rs]k_(?:live|test)_[A-Za-z0-9]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
];

/**
 * `Bearer <token>` in any case. The token must look like one (a digit or token punctuation, or
 * 20+ letters), so prose ("the bearer of good news") stays.
 */
const BEARER =
  /(?<![A-Za-z])(bearer\s+)((?=[A-Za-z0-9\-._~+/]{6,})[A-Za-z0-9\-._~+/]*[0-9\-._~+/][A-Za-z0-9\-._~+/]*=*|[A-Za-z]{20,}=*)/gi;
const BASIC = /\b(authorization["']?\s*[:=]\s*["']?basic)(\s+)([A-Za-z0-9+/]{4,}=*)/gi;

const CREDENTIAL_WORDS = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'secret[_-]?key',
  'api[_-]?key',
  'token',
  'access[_-]?key',
  'private[_-]?key',
  'client[_-]?secret',
];

/**
 * `key = value`, `key: value`, JSON `"key": "value"`, and a value on the next line after
 * `key=`. The name must end in a credential word (`MY_API_KEY`, `access_token`), so counts such
 * as `max_tokens=4000` stay.
 */
function assignmentPattern(extraNames: readonly string[]): RegExp {
  const words = [...CREDENTIAL_WORDS, ...extraNames.map(escapeRegExp)].join('|');
  return new RegExp(`((?<![A-Za-z0-9])[A-Za-z0-9_-]*?(?:${words})["']?\\s*[=:]\\s*["']?)([^\\s"'<>,;}\\]]+)`, 'gi');
}
const DEFAULT_ASSIGNMENT = assignmentPattern([]);

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** Phone numbers with separators; dotted version strings (22.11.0) and bare counts never match. */
const PHONE = /(?<![\w+.])(?:\+\d{1,3}[ -]?)?(?:\(\d{2,4}\)[ -]?|\d{3}[ -])?\d{3}[ -]\d{4}(?![\w.]\d|\w)/g;
/** Any user's home directory (hardening beyond the operator's own prefix). */
const HOME_DIRS = /(?<![A-Za-z0-9._~-])(?:\/home\/[^/\s"'`:]+|\/Users\/[^/\s"'`:]+|[A-Za-z]:\\Users\\[^\\\s"'`]+)/g;

/** Redacts one string through the §9.4 pipeline. */
export function redactText(s: string, opts: RedactOptions = {}): string {
  let out = s;
  // (a) secrets.
  for (const re of BARE_SECRETS) out = out.replace(re, SECRET);
  out = out.replace(BEARER, (_m, head: string) => `${head}${SECRET}`);
  out = out.replace(BASIC, (_m, head: string, gap: string) => `${head}${gap}${SECRET}`);
  const assignment = opts.secretNames?.length ? assignmentPattern(opts.secretNames) : DEFAULT_ASSIGNMENT;
  out = out.replace(assignment, (m, head: string, value: string) =>
    value === SECRET || value.startsWith('[REDACTED') ? m : `${head}${SECRET}`,
  );
  // (b) operator-configured secret values, longest first so a prefix never leaves a tail.
  for (const v of [...(opts.secretValues ?? [])].filter((x) => x.length > 0).sort((a, b) => b.length - a.length)) {
    out = out.split(v).join(SECRET);
  }
  // (c) home prefix, then any other user's home.
  const home = opts.home ?? homedir();
  if (home && home !== '/')
    out = out.replace(new RegExp(`${escapeRegExp(home.replace(/[\\/]+$/, ''))}(?=$|[\\\\/\\s"'\`:])`, 'g'), '~');
  out = out.replace(HOME_DIRS, '~');
  // (d) PII.
  if (opts.pii !== false) {
    out = out.replace(EMAIL, PII);
    out = out.replace(PHONE, (m) => (m.replace(/\D/g, '').length >= 7 ? PII : m));
  }
  return out;
}

/** Object keys whose value is a credential whatever it looks like (any case). */
const CREDENTIAL_KEY =
  /^(?:.*[_-])?(?:password|passwd|passphrase|secret|api[_-]?key|apikey|token|access[_-]?token|refresh[_-]?token|authorization|auth|cookie|set-cookie|private[_-]?key|client[_-]?secret|credentials?)$/i;

/**
 * Redacts a JSON value: strings (also inside arrays) go through redactText, values under
 * credential-named keys are replaced whole, other values pass untouched. Never mutates `v`.
 */
export function redactValue<T>(v: T, opts: RedactOptions = {}): T {
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return redactText(x, opts);
    if (Array.isArray(x)) return x.map(walk);
    if (typeof x === 'object' && x !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, val] of Object.entries(x)) out[k] = CREDENTIAL_KEY.test(k) && val !== null ? SECRET : walk(val);
      return out;
    }
    return x;
  };
  return walk(v) as T;
}
