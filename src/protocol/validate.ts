// Event validation (AEP-0001 §5–§8, aep-event.schema.json, AEP-0002 payload schemas).
// Validation returns issues tagged with a stable rule id; builders and assertEvent throw.
import {
  AEP_VERSION,
  CAPTURE_LEVELS,
  CORE_ATTRIBUTES,
  SEVERITIES,
  type AepEvent,
  type CaptureLevel,
} from './envelope.js';
import { SteeringError } from './errors.js';
import { isDateTime, validatePayload } from './payloads.js';
import { captureViolations } from './capture.js';
import { COMMAND_SCOPED_PATTERN, TYPE_PATTERN, typeStatus } from './types.js';

/** Stable ids of the rules an event can fail (the AEP SDK's names where it has one). */
export type IssueRule =
  | 'not-an-object'
  | 'version'
  | 'required'
  | 'attr-type'
  | 'type-syntax'
  | 'format'
  | 'enum'
  | 'scoping'
  | 'extension-name'
  | 'extension-value'
  /** A core type outside the 0.1 registry (an emitter uses registered types only, AEP-0001 §6). */
  | 'unregistered-type'
  /** A per-type payload rule (AEP-0002 §4–§7). */
  | 'payload'
  /** A `data` field whose minimum capture level is above the event's `capture` (AEP-0002 §5.1). */
  | 'capture-violation';

export interface Issue {
  rule: IssueRule;
  /** The attribute (`seq`), extension name, or dotted path under data (`data.answer.text`). */
  path: string;
  message: string;
}

export interface ValidateOptions {
  /** Check `data` against the type's payload shape. Default true. */
  payloads?: boolean;
  /** Flag data fields above the event's capture level. Default true. */
  capture?: boolean;
  /** Flag unregistered core-namespace types. Default true. */
  registry?: boolean;
}

const REQUIRED_STRINGS = ['id', 'type', 'time', 'source', 'agent'] as const;
const OPTIONAL_STRINGS = ['subject', 'session', 'run', 'step', 'cause'] as const;
const CORE = new Set<string>(CORE_ATTRIBUTES);
/** Every property name on the envelope, core or extension (schema `propertyNames`, AEP-0001 §5.4). */
const PROPERTY_NAME = /^[a-z0-9]{1,20}$/;
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** RFC 3986: a scheme, then only URI characters and well-formed percent escapes. */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNonNegInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * Bounded sets of strings that already passed a pattern: a session's events repeat their `type`
 * and `source`, so each is matched once rather than per event (past the cap a set starts over).
 */
class Seen {
  private readonly held = new Set<string>();
  constructor(
    private readonly test: (s: string) => boolean,
    private readonly cap = 4096,
  ) {}
  has(s: string): boolean {
    if (this.held.has(s)) return true;
    if (!this.test(s)) return false;
    if (this.held.size >= this.cap) this.held.clear();
    this.held.add(s);
    return true;
  }
}

const GOOD_TYPE = new Seen((t) => TYPE_PATTERN.test(t));
const GOOD_SOURCE = new Seen((s) => URI.test(s));
const GOOD_NAME = new Seen((n) => PROPERTY_NAME.test(n));

/** The AEP type grammar, each distinct type matched once (the builders ask per event). */
export const isAepType = (t: string): boolean => GOOD_TYPE.has(t);

/** The string attributes a builder's caller may supply, in check order (one array, not one per event). */
const SUPPLIED_STRINGS = ['id', ...OPTIONAL_STRINGS, 'agent'] as const;

/**
 * What a builder takes from its caller, checked where it comes in: the attributes the builder
 * makes itself (`aep`, `id`, `time`, `seq`, `epoch`, a `source` from `sourceUri`) are valid by
 * construction, so a built event needs no second pass over the whole envelope on the hot path.
 * `test/protocol/build.test.ts` validates everything the builders make.
 */
export function suppliedIssue(f: Record<string, unknown>): Issue | undefined {
  for (const a of SUPPLIED_STRINGS) {
    const v = f[a];
    if (v !== undefined && (typeof v !== 'string' || v === '')) {
      return {
        rule: 'attr-type',
        path: a,
        message: `${a} must be a non-empty string when present; absent attributes are omitted, never null (AEP-0001 §5.1)`,
      };
    }
  }
  if (f.source !== undefined && (typeof f.source !== 'string' || !GOOD_SOURCE.has(f.source))) {
    return {
      rule: 'format',
      path: 'source',
      message: 'source must be a URI, e.g. aep://{host}/agent/{agent}/session/{session} (AEP-0001 §5.1)',
    };
  }
  if (f.traceparent !== undefined && (typeof f.traceparent !== 'string' || !TRACEPARENT.test(f.traceparent))) {
    return {
      rule: 'format',
      path: 'traceparent',
      message: 'traceparent must be a W3C Trace Context value (AEP-0001 §5.1)',
    };
  }
  if (f.severity !== undefined && !(SEVERITIES as readonly unknown[]).includes(f.severity)) {
    return {
      rule: 'enum',
      path: 'severity',
      message: `severity must be one of ${SEVERITIES.join('|')} (AEP-0001 §8.1)`,
    };
  }
  if (f.capture !== undefined && !(CAPTURE_LEVELS as readonly unknown[]).includes(f.capture)) {
    return {
      rule: 'enum',
      path: 'capture',
      message: `capture must be one of ${CAPTURE_LEVELS.join('|')} (AEP-0001 §8.2)`,
    };
  }
  if (f.data !== undefined && !isObject(f.data))
    return { rule: 'attr-type', path: 'data', message: 'data must be a JSON object (AEP-0001 §5)' };
  return undefined;
}

/** The envelope tier: the whole schema, formats included, without payloads. */
function envelopeIssues(e: Record<string, unknown>): Issue[] {
  const out: Issue[] = [];
  attributeIssues(e, out);
  const type = typeof e.type === 'string' && e.type !== '' ? e.type : undefined;
  valueIssues(e, type, out);
  extensionIssues(e, out);
  if (type !== undefined) scopingIssues(e, type, out);
  return out;
}

/** The version, the required and optional string attributes, and the sequence numbers (AEP-0001 §5.1, §7). */
function attributeIssues(e: Record<string, unknown>, out: Issue[]): void {
  if (e.aep !== AEP_VERSION)
    out.push({ rule: 'version', path: 'aep', message: `aep must be "${AEP_VERSION}" (AEP-0001 §5.1)` });
  for (const a of REQUIRED_STRINGS) {
    const v = e[a];
    if (v === undefined) out.push({ rule: 'required', path: a, message: `${a} is required (AEP-0001 §5.1)` });
    else if (typeof v !== 'string' || v === '')
      out.push({ rule: 'attr-type', path: a, message: `${a} must be a non-empty string (AEP-0001 §5.1)` });
  }
  for (const a of OPTIONAL_STRINGS) {
    const v = e[a];
    if (v !== undefined && (typeof v !== 'string' || v === '')) {
      out.push({
        rule: 'attr-type',
        path: a,
        message: `${a} must be a non-empty string when present; absent attributes are omitted, never null (AEP-0001 §5.1)`,
      });
    }
  }
  for (const a of ['seq', 'epoch'] as const) {
    if (e[a] !== undefined && !isNonNegInt(e[a]))
      out.push({ rule: 'attr-type', path: a, message: `${a} must be an integer >= 0 (AEP-0001 §7)` });
  }
}

/** The grammar and formats of the attribute values: type, time, source, traceparent, enums, data. */
function valueIssues(e: Record<string, unknown>, type: string | undefined, out: Issue[]): void {
  if (type !== undefined && !TYPE_PATTERN.test(type)) {
    out.push({
      rule: 'type-syntax',
      path: 'type',
      message: `type "${type}" is not {category}.{rest} with one of the 13 categories, nor x.{vendor}.{category}.{rest} (AEP-0001 §6)`,
    });
  }
  if (typeof e.time === 'string' && e.time !== '' && !isDateTime(e.time)) {
    out.push({
      rule: 'format',
      path: 'time',
      message: 'time must be an RFC 3339 date-time with a timezone (AEP-0001 §5.1)',
    });
  }
  if (typeof e.source === 'string' && e.source !== '' && !URI.test(e.source)) {
    out.push({
      rule: 'format',
      path: 'source',
      message: 'source must be a URI, e.g. aep://{host}/agent/{agent}/session/{session} (AEP-0001 §5.1)',
    });
  }
  if (e.traceparent !== undefined && (typeof e.traceparent !== 'string' || !TRACEPARENT.test(e.traceparent))) {
    out.push({
      rule: 'format',
      path: 'traceparent',
      message: 'traceparent must be a W3C Trace Context value (AEP-0001 §5.1)',
    });
  }
  if (e.severity !== undefined && !(SEVERITIES as readonly unknown[]).includes(e.severity)) {
    out.push({
      rule: 'enum',
      path: 'severity',
      message: `severity must be one of ${SEVERITIES.join('|')} (AEP-0001 §8.1)`,
    });
  }
  if (e.capture !== undefined && !(CAPTURE_LEVELS as readonly unknown[]).includes(e.capture)) {
    out.push({
      rule: 'enum',
      path: 'capture',
      message: `capture must be one of ${CAPTURE_LEVELS.join('|')} (AEP-0001 §8.2)`,
    });
  }
  if (e.data !== undefined && !isObject(e.data))
    out.push({ rule: 'attr-type', path: 'data', message: 'data must be a JSON object (AEP-0001 §5)' });
}

/** Attribute names, and extension attributes that must be scalars (AEP-0001 §5.4). */
function extensionIssues(e: Record<string, unknown>, out: Issue[]): void {
  for (const [name, v] of Object.entries(e)) {
    if (!PROPERTY_NAME.test(name)) {
      out.push({
        rule: 'extension-name',
        path: name,
        message: `attribute name "${name}" must match [a-z0-9]{1,20} (AEP-0001 §5.4)`,
      });
    }
    if (CORE.has(name)) continue;
    const scalar = typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));
    if (!scalar)
      out.push({
        rule: 'extension-value',
        path: name,
        message: `extension attribute "${name}" must be a string, integer or boolean (AEP-0001 §5.4)`,
      });
  }
}

/** Which of session, run, step and seq the type's scope requires or forbids (AEP-0001 §5.2, AEP-0004 §2.2). */
function scopingIssues(e: Record<string, unknown>, type: string, out: Issue[]): void {
  const has = (a: string): boolean => e[a] !== undefined;
  if (type.startsWith('agent.')) {
    const found = ['session', 'run', 'step', 'seq'].filter(has);
    if (found.length > 0)
      out.push({
        rule: 'scoping',
        path: found[0]!,
        message: `agent-scoped ${type} must omit session, run, step and seq; found ${found.join(', ')} (AEP-0001 §5.2)`,
      });
  } else if (COMMAND_SCOPED_PATTERN.test(type)) {
    if (!has('session'))
      out.push({
        rule: 'scoping',
        path: 'session',
        message: `${type} must carry the target session (AEP-0004 §2.2)`,
      });
    if (has('seq'))
      out.push({
        rule: 'scoping',
        path: 'seq',
        message: `${type} is a foreign-emitter event and must omit seq (AEP-0001 §5.2, AEP-0004 §2.2)`,
      });
  } else {
    const missing = ['session', 'seq'].filter((a) => !has(a));
    if (missing.length > 0)
      out.push({
        rule: 'scoping',
        path: missing[0]!,
        message: `session-scoped ${type} must carry session and seq; missing ${missing.join(', ')} (AEP-0001 §5.2)`,
      });
  }
}

/**
 * The full check: envelope (all sixteen attributes, formats, grammar, scoping, extensions),
 * registry membership, the per-type payload, and capture honesty.
 */
export function validateEvent(e: unknown, opts: ValidateOptions = {}): Issue[] {
  if (!isObject(e)) return [{ rule: 'not-an-object', path: '', message: 'an event is a JSON object (AEP-0001 §5)' }];
  const out = envelopeIssues(e);
  const type = typeof e.type === 'string' && TYPE_PATTERN.test(e.type) ? e.type : undefined;
  if (type === undefined) return out;
  if (opts.registry !== false && typeStatus(type) === undefined) {
    out.push({
      rule: 'unregistered-type',
      path: 'type',
      message: `${type} is not a registered 0.1 core type; use a registered type or x.{vendor}.… (AEP-0001 §6)`,
    });
  }
  const dataOk = e.data === undefined || isObject(e.data);
  const level = (CAPTURE_LEVELS as readonly unknown[]).includes(e.capture ?? 'metadata')
    ? ((e.capture ?? 'metadata') as CaptureLevel)
    : undefined;
  if (opts.payloads !== false && dataOk) out.push(...validatePayload(type, e.data, level));
  if (opts.capture !== false && dataOk && isObject(e.data) && level !== undefined) {
    for (const v of captureViolations(type, e.data, level)) {
      out.push({
        rule: 'capture-violation',
        path: `data.${v.path}`,
        message: `data.${v.path} needs capture ${v.needs} or higher; the event declares ${level} (AEP-0002 §5.1)`,
      });
    }
  }
  return out;
}

/**
 * The relay ingest tier (aep-wire.md §1.9): the envelope schema without payloads or capture
 * honesty, first failure only. Stricter than the reference relay's check on purpose: every
 * envelope-level invalid fixture must be refused at ingest (AEP-0003 §3.2).
 */
export function relayCheck(e: unknown): Issue | undefined {
  if (!isObject(e)) return { rule: 'not-an-object', path: '', message: 'an event is a JSON object (AEP-0001 §5)' };
  // Every relayed frame is checked: a valid one passes the allocation-free pass; only a frame
  // that fails it is checked again in full, for the first issue and its message.
  return envelopeValid(e) ? undefined : envelopeIssues(e)[0];
}

const SCOPE = new Map<string, 'agent' | 'command' | 'session'>();
const isString = (v: unknown): boolean => typeof v === 'string' && v !== '';

function scopeOf(type: string): 'agent' | 'command' | 'session' {
  let s = SCOPE.get(type);
  if (s === undefined) {
    s = type.startsWith('agent.') ? 'agent' : COMMAND_SCOPED_PATTERN.test(type) ? 'command' : 'session';
    if (SCOPE.size >= 4096) SCOPE.clear();
    SCOPE.set(type, s);
  }
  return s;
}

/** True exactly when `envelopeIssues(e)` is empty (`test/protocol/validate.test.ts` holds both to it). */
function envelopeValid(e: Record<string, unknown>): boolean {
  if (e.aep !== AEP_VERSION) return false;
  if (!isString(e.id) || !isString(e.type) || !isString(e.time) || !isString(e.source) || !isString(e.agent))
    return false;
  for (const a of OPTIONAL_STRINGS) if (e[a] !== undefined && !isString(e[a])) return false;
  if ((e.seq !== undefined && !isNonNegInt(e.seq)) || (e.epoch !== undefined && !isNonNegInt(e.epoch))) return false;
  const type = e.type as string;
  if (!GOOD_TYPE.has(type) || !isDateTime(e.time as string) || !GOOD_SOURCE.has(e.source as string)) return false;
  if (e.traceparent !== undefined && (typeof e.traceparent !== 'string' || !TRACEPARENT.test(e.traceparent)))
    return false;
  if (e.severity !== undefined && !(SEVERITIES as readonly unknown[]).includes(e.severity)) return false;
  if (e.capture !== undefined && !(CAPTURE_LEVELS as readonly unknown[]).includes(e.capture)) return false;
  if (e.data !== undefined && !isObject(e.data)) return false;
  for (const name of Object.keys(e)) {
    if (CORE.has(name)) continue;
    if (!GOOD_NAME.has(name)) return false;
    const v = e[name];
    if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v))))
      return false;
  }
  const scope = scopeOf(type);
  if (scope === 'agent')
    return e.session === undefined && e.run === undefined && e.step === undefined && e.seq === undefined;
  if (scope === 'command') return e.session !== undefined && e.seq === undefined;
  return e.session !== undefined && e.seq !== undefined;
}

/** Throws SteeringError('EVENT_INVALID') naming the first rule that failed. */
export function assertEvent(e: unknown, opts?: ValidateOptions): asserts e is AepEvent {
  const issues = validateEvent(e, opts);
  const first = issues[0];
  if (first) {
    const more = issues.length > 1 ? ` (+${issues.length - 1} more)` : '';
    throw new SteeringError('EVENT_INVALID', `${first.rule}: ${first.message}${more}`);
  }
}
