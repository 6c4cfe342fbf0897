// Where the console sends its pushes: `ntfy:` (a topic URL on any ntfy server) or `webhook:` (any
// URL taking a JSON POST). Options ride in the URL's fragment, which no HTTP client ever sends:
// `#capture=metadata&on=attention,dropped`. The ceiling defaults to metadata, since a push
// travels through someone else's server.
import { CAPTURE_LEVELS, type CaptureLevel } from '../protocol/envelope.js';
import { SteeringError } from '../protocol/errors.js';

/** What a target may be told about; `attention` (a person is waited for) unless `on=` says more. */
const NOTIFY_KINDS = ['attention', 'dropped', 'ended-queued', 'offline'] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

export type TargetKind = 'ntfy' | 'webhook';

export interface NotifyTarget {
  kind: TargetKind;
  /** The URL posted to, fragment removed. */
  url: string;
  /** The highest capture level anything in the push may come from. */
  capture: CaptureLevel;
  on: NotifyKind[];
}

const TARGET_FORMS = [
  'ntfy:https://ntfy.sh/<topic>            an ntfy topic URL (any ntfy server)',
  'webhook:https://example.org/hook        a URL that takes the JSON body',
  'options after #: capture=none|metadata|redacted|full (default metadata),',
  `  on=${NOTIFY_KINDS.join(',')} (default attention)`,
].join('\n');

const bad = (spec: string, why: string): SteeringError =>
  new SteeringError('CONFIG_INVALID', `notify target "${spec}": ${why}. Accepted forms:\n${TARGET_FORMS}`);

export function parseTarget(spec: string): NotifyTarget {
  const m = /^(ntfy|webhook):(.+)$/.exec(spec.trim());
  if (!m) return throwing(bad(spec, 'it must start with ntfy: or webhook:'));
  const kind = m[1] as TargetKind;
  let u: URL;
  try {
    u = new URL(m[2]!);
  } catch {
    return throwing(bad(spec, 'the rest is not a URL'));
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad(spec, 'the URL must be http: or https:');
  if (kind === 'ntfy' && u.pathname.replace(/\/+$/, '') === '')
    throw bad(spec, 'an ntfy URL names its topic (https://ntfy.sh/<topic>)');
  const target: NotifyTarget = { kind, url: '', capture: 'metadata', on: ['attention'] };
  for (const [key, value] of new URLSearchParams(u.hash.slice(1))) {
    if (key === 'capture') {
      if (!(CAPTURE_LEVELS as readonly string[]).includes(value))
        throw bad(spec, `capture must be one of ${CAPTURE_LEVELS.join(', ')}`);
      target.capture = value as CaptureLevel;
    } else if (key === 'on') {
      const kinds = value.split(',').filter((k) => k !== '');
      const unknown = kinds.filter((k) => !(NOTIFY_KINDS as readonly string[]).includes(k));
      if (unknown.length > 0 || kinds.length === 0) throw bad(spec, `on takes ${NOTIFY_KINDS.join(', ')}`);
      target.on = kinds as NotifyKind[];
    } else {
      throw bad(spec, `unknown option "${key}"`);
    }
  }
  u.hash = '';
  target.url = u.toString();
  return target;
}

function throwing(e: Error): never {
  throw e;
}

/** `AEP_NOTIFY`: targets separated by white space. */
export const targetsFromEnv = (value: string | undefined): NotifyTarget[] =>
  (value ?? '')
    .split(/\s+/)
    .filter((s) => s !== '')
    .map(parseTarget);

/**
 * A config file's `notify` section: a list of target strings, or of objects
 * `{ "target": "ntfy:…", "capture": "…", "on": ["…"] }` (the same options, spelt as fields).
 */
export function targetsFromConfig(section: unknown): NotifyTarget[] {
  if (section === undefined) return [];
  if (!Array.isArray(section))
    throw new SteeringError(
      'CONFIG_INVALID',
      `the config file's "notify" must be a list of targets. Accepted forms:\n${TARGET_FORMS}`,
    );
  return section.map((item: unknown) => {
    if (typeof item === 'string') return parseTarget(item);
    const o = item as { target?: unknown; capture?: unknown; on?: unknown } | null;
    if (o === null || typeof o !== 'object' || typeof o.target !== 'string')
      throw bad(JSON.stringify(item), 'an entry is a string or has a "target" string');
    const params = new URLSearchParams();
    if (o.capture !== undefined) params.set('capture', String(o.capture));
    if (o.on !== undefined) params.set('on', Array.isArray(o.on) ? o.on.join(',') : String(o.on));
    const extra = params.toString();
    return parseTarget(extra === '' ? o.target : `${o.target.split('#')[0]}#${extra}`);
  });
}

/** A target named for messages without what may be secret in it (an ntfy topic is its password). */
export const targetLabel = (t: NotifyTarget): string => `${t.kind}:${new URL(t.url).origin}/…`;
