// The attr-match filter dialect (AEP-0003 §6). A filter is an AND of predicates on envelope
// attributes; anything the dialect does not define is refused (fail closed, never match-all).
import { CAPTURE_LEVELS, CORE_ATTRIBUTES, SEVERITIES, severityRank, type AepEvent } from './envelope.js';
import { FilterError } from './errors.js';

export type EventPredicate = (e: AepEvent) => boolean;

/** Attributes a filter may name; `time`, `seq`, `aep`, `traceparent` and `data` are not among them. */
const FILTERABLE = new Set([
  'id',
  'type',
  'subject',
  'source',
  'agent',
  'session',
  'run',
  'step',
  'epoch',
  'cause',
  'severity',
  'capture',
]);
const CORE = new Set<string>(CORE_ATTRIBUTES);
const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;
const TYPE_GLOB = /^([a-z0-9_-]+\.)+\*$/;
/** Consumers fill these defaults before matching (AEP-0001 §5.1). */
const DEFAULTS: Record<string, string | number> = { severity: 'info', capture: 'metadata', epoch: 0 };

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkLevel(key: string, v: Scalar): void {
  if (key === 'severity' && !(SEVERITIES as readonly unknown[]).includes(v))
    throw new FilterError(`severity "${String(v)}" is not a severity level`);
  if (key === 'capture' && !(CAPTURE_LEVELS as readonly unknown[]).includes(v))
    throw new FilterError(`capture "${String(v)}" is not a capture level`);
}

/** One value of an equality or inclusion predicate → a test on the attribute value. */
function valueTest(key: string, v: unknown): (x: unknown) => boolean {
  if (!isScalar(v))
    throw new FilterError(`predicate on "${key}" must be a string, integer or boolean (or an array of them)`);
  if (typeof v === 'string' && v.includes('*')) {
    if (key !== 'type') throw new FilterError(`"*" patterns are allowed on type only, not on "${key}"`);
    if (!TYPE_GLOB.test(v)) throw new FilterError(`type pattern "${v}" must be one or more segments followed by ".*"`);
    const prefix = v.slice(0, -1);
    return (x) => typeof x === 'string' && x.startsWith(prefix) && x.length > prefix.length;
  }
  checkLevel(key, v);
  return (x) => x === v;
}

function predicate(key: string, spec: unknown): (x: unknown) => boolean {
  if (Array.isArray(spec)) {
    if (spec.length === 0) throw new FilterError(`inclusion array on "${key}" must not be empty`);
    const tests = spec.map((v) => valueTest(key, v));
    return (x) => tests.some((t) => t(x));
  }
  if (isObject(spec)) {
    if (key !== 'severity') throw new FilterError(`object predicates are allowed on severity only, not on "${key}"`);
    const ops = Object.keys(spec);
    if (ops.length === 0) throw new FilterError('severity range needs "gte" and/or "lte"');
    for (const op of ops)
      if (op !== 'gte' && op !== 'lte') throw new FilterError(`"${op}" is not a severity operator (gte, lte)`);
    for (const op of ops) {
      const level = spec[op];
      if (typeof level !== 'string' || !(SEVERITIES as readonly string[]).includes(level))
        throw new FilterError(`severity ${op} "${String(level)}" is not a severity level`);
    }
    const lo = spec.gte === undefined ? -Infinity : severityRank(spec.gte as (typeof SEVERITIES)[number]);
    const hi = spec.lte === undefined ? Infinity : severityRank(spec.lte as (typeof SEVERITIES)[number]);
    return (x) =>
      typeof x === 'string' &&
      (SEVERITIES as readonly string[]).includes(x) &&
      severityRank(x as (typeof SEVERITIES)[number]) >= lo &&
      severityRank(x as (typeof SEVERITIES)[number]) <= hi;
  }
  return valueTest(key, spec);
}

/**
 * Compiles an attr-match filter. Throws FilterError naming why a filter is refused.
 * An absent attribute never matches, except severity, capture and epoch, which take their defaults.
 */
export function compileFilter(spec: unknown): EventPredicate {
  if (!isObject(spec)) throw new FilterError('a filter must be a JSON object');
  const tests: [string, (x: unknown) => boolean][] = [];
  for (const [key, value] of Object.entries(spec)) {
    if (!FILTERABLE.has(key)) {
      if (CORE.has(key)) throw new FilterError(`"${key}" is not filterable`);
      if (!EXTENSION_NAME.test(key))
        throw new FilterError(`"${key}" is neither a filterable attribute nor an extension name [a-z0-9]{1,20}`);
    }
    tests.push([key, predicate(key, value)]);
  }
  return (e) =>
    tests.every(([key, test]) => {
      const v = (e as Record<string, unknown>)[key] ?? DEFAULTS[key];
      return v !== undefined && test(v);
    });
}

/**
 * The SSE `filter` query parameter (AEP-0003 §3.3): attr-match JSON, URL-decoded by the
 * caller's query parser. Absent or empty means `{}`. Throws FilterError for bad JSON.
 */
export function parseFilterParam(value: string | null | undefined): EventPredicate {
  if (value === null || value === undefined || value === '') return compileFilter({});
  let spec: unknown;
  try {
    spec = JSON.parse(value);
  } catch {
    throw new FilterError('filter is not valid JSON');
  }
  return compileFilter(spec);
}
