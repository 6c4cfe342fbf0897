// A small payload-shape vocabulary: one declaration per AEP type gives the runtime check, the
// TypeScript type and the per-field capture annotations (AEP-0002 §5.1 `x-aep-capture`).
// Payloads are open (AEP-0002 §5): unknown keys pass and count as `metadata`.

/** The annotation levels a payload field can carry (AEP-0002 §5.1). */
export type FieldLevel = 'metadata' | 'redacted' | 'full';

/** One failed payload rule: a dotted path under `data` and why. */
export interface ShapeIssue {
  path: string;
  message: string;
}

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'object' | 'array' | 'any-object' | 'union';

export interface Shape<T = unknown> {
  readonly kind: Kind;
  /** Minimum event capture level at which this field may be present. */
  readonly level: FieldLevel;
  /** Object fields, for `object` shapes (used to build dotted annotation paths). */
  readonly fields?: Readonly<Record<string, Shape>>;
  /** Item shape, for `array` shapes (`[]` in annotation paths). */
  readonly items?: Shape;
  /** Branches, for `union` shapes. */
  readonly branches?: readonly Shape[];
  /**
   * Checks `v`. `ceiling` is the rank of the event's capture level (0 none … 3 full): a
   * required field annotated above it may be absent, because gating drops it (AEP-0002 §5.1).
   */
  check(v: unknown, path: string, out: ShapeIssue[], ceiling?: number): void;
  /** The same shape annotated at another level. */
  at(level: FieldLevel): Shape<T>;
  /** Adds a rule the structure cannot express (e.g. AEP-0006 select needs choices). */
  refine(rule: (v: T, path: string, out: ShapeIssue[]) => void): Shape<T>;
  /** Phantom member carrying the TypeScript type. */
  readonly __type?: T;
}

export type Infer<S> = S extends Shape<infer T> ? T : never;

interface Spec {
  kind: Kind;
  level: FieldLevel;
  fields?: Record<string, Shape>;
  items?: Shape;
  branches?: readonly Shape[];
  test: (v: unknown, path: string, out: ShapeIssue[], ceiling: number) => void;
  rules: ((v: never, path: string, out: ShapeIssue[]) => void)[];
}

function make<T>(spec: Spec): Shape<T> {
  const shape: Shape<T> = {
    kind: spec.kind,
    level: spec.level,
    ...(spec.fields ? { fields: spec.fields } : {}),
    ...(spec.items ? { items: spec.items } : {}),
    ...(spec.branches ? { branches: spec.branches } : {}),
    check(v, path, out, ceiling = LEVEL_RANK.full) {
      const before = out.length;
      spec.test(v, path, out, ceiling);
      if (out.length !== before) return;
      for (const rule of spec.rules) (rule as (v: unknown, p: string, o: ShapeIssue[]) => void)(v, path, out);
    },
    at: (level) => make<T>({ ...spec, level }),
    refine: (rule) =>
      make<T>({ ...spec, rules: [...spec.rules, rule as (v: never, p: string, o: ShapeIssue[]) => void] }),
  };
  return shape;
}

const at = (path: string): string => path || 'data';
const LEVEL_RANK: Record<FieldLevel, number> = { metadata: 1, redacted: 2, full: 3 };
const describe = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'number' && !Number.isInteger(v)
        ? 'non-integer number'
        : typeof v;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string or a boolean: its kind is also what `typeof` says of a value that fits. */
function typed<T>(kind: 'string' | 'boolean', noun: string): Shape<T> {
  return make<T>({
    kind,
    level: 'metadata',
    rules: [],
    test: (v, p, out) => {
      if (typeof v !== kind) out.push({ path: at(p), message: `${at(p)} must be ${noun}, got ${describe(v)}` });
    },
  });
}

/** A number that `fits` says is of its kind (integer, finite), then within the bounds given. */
function numeric(
  kind: 'integer' | 'number',
  noun: string,
  fits: (v: number) => boolean,
  bounds: { min?: number; max?: number },
): Shape<number> {
  return make<number>({
    kind,
    level: 'metadata',
    rules: [],
    test: (v, p, out) => {
      if (typeof v !== 'number' || !fits(v))
        out.push({ path: at(p), message: `${at(p)} must be ${noun}, got ${describe(v)}` });
      else if (bounds.min !== undefined && v < bounds.min)
        out.push({ path: at(p), message: `${at(p)} must be >= ${bounds.min}` });
      else if (bounds.max !== undefined && v > bounds.max)
        out.push({ path: at(p), message: `${at(p)} must be <= ${bounds.max}` });
    },
  });
}

export const str = (): Shape<string> => typed('string', 'a string');
export const int = (bounds: { min?: number } = {}): Shape<number> =>
  numeric('integer', 'an integer', Number.isInteger, bounds);
export const num = (bounds: { min?: number; max?: number } = {}): Shape<number> =>
  numeric('number', 'a number', Number.isFinite, bounds);
export const bool = (): Shape<boolean> => typed('boolean', 'a boolean');

export function oneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  return make<V[number]>({
    kind: 'enum',
    level: 'metadata',
    rules: [],
    test: (v, p, out) => {
      if (typeof v !== 'string' || !values.includes(v))
        out.push({ path: at(p), message: `${at(p)} must be one of ${values.join('|')}` });
    },
  });
}

/** Any JSON object whose inside is not described (e.g. tool `args`, state images). */
export function anyObject(): Shape<Record<string, unknown>> {
  return make<Record<string, unknown>>({
    kind: 'any-object',
    level: 'metadata',
    rules: [],
    test: (v, p, out) => {
      if (!isObject(v)) out.push({ path: at(p), message: `${at(p)} must be an object, got ${describe(v)}` });
    },
  });
}

export function arrayOf<S extends Shape>(item: S): Shape<Infer<S>[]> {
  return make<Infer<S>[]>({
    kind: 'array',
    level: 'metadata',
    items: item,
    rules: [],
    test: (v, p, out, ceiling) => {
      if (!Array.isArray(v)) {
        out.push({ path: at(p), message: `${at(p)} must be an array, got ${describe(v)}` });
        return;
      }
      v.forEach((x, i) => {
        item.check(x, `${at(p)}[${i}]`, out, ceiling);
      });
    },
  });
}

/** A value matching any one branch (the schema's `type: [object, string]`). */
export function either<A extends Shape, B extends Shape>(a: A, b: B): Shape<Infer<A> | Infer<B>> {
  return make<Infer<A> | Infer<B>>({
    kind: 'union',
    level: 'metadata',
    branches: [a, b],
    rules: [],
    test: (v, p, out, ceiling) => {
      const ra: ShapeIssue[] = [];
      a.check(v, p, ra, ceiling);
      if (ra.length === 0) return;
      const rb: ShapeIssue[] = [];
      b.check(v, p, rb, ceiling);
      if (rb.length === 0) return;
      out.push({ path: at(p), message: `${at(p)} must be a ${a.kind} or a ${b.kind}, got ${describe(v)}` });
    },
  });
}

type Fields = Record<string, Shape>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<R extends Fields, O extends Fields> = Simplify<
  { [K in keyof R]: Infer<R[K]> } & { [K in keyof O]?: Infer<O[K]> }
>;

/**
 * An open object: `required` fields must be present, `optional` fields may be; both are
 * type-checked when present; other keys pass (AEP-0002 §5: payloads are open).
 */
export function obj<R extends Fields = Record<never, never>, O extends Fields = Record<never, never>>(
  required: R,
  optional?: O,
): Shape<ObjectOf<R, O>> {
  const fields: Fields = { ...required, ...(optional ?? {}) };
  const req = Object.keys(required);
  return make<ObjectOf<R, O>>({
    kind: 'object',
    level: 'metadata',
    fields,
    rules: [],
    test: (v, p, out, ceiling) => {
      if (!isObject(v)) {
        out.push({ path: at(p), message: `${at(p)} must be an object, got ${describe(v)}` });
        return;
      }
      for (const k of req) {
        if (v[k] === undefined && LEVEL_RANK[fields[k]!.level] <= ceiling)
          out.push({ path: `${at(p)}.${k}`, message: `${at(p)}.${k} is required` });
      }
      for (const [k, s] of Object.entries(fields)) if (v[k] !== undefined) s.check(v[k], `${at(p)}.${k}`, out, ceiling);
    },
  });
}

/**
 * Dotted-path annotations of a payload shape (`answer.text`, `options[].label`), the form the
 * reference loader uses. Only fields above `metadata` matter to gating, but all are listed.
 */
export function annotationPaths(shape: Shape): Map<string, FieldLevel> {
  const out = new Map<string, FieldLevel>();
  const walk = (s: Shape, prefix: string): void => {
    if (s.fields) {
      for (const [k, f] of Object.entries(s.fields)) {
        const path = prefix ? `${prefix}.${k}` : k;
        out.set(path, f.level);
        walk(f, path);
      }
    }
    if (s.items) walk(s.items, `${prefix}[]`);
    for (const b of s.branches ?? []) walk(b, prefix);
  };
  walk(shape, '');
  return out;
}
