// Capture levels and gating (AEP-0001 §8.2, AEP-0002 §5.1/§5.3, AEP-0003 §6.4/§9).
// A hop may lower an event's level and never raises it; `redacted` is a provenance claim a
// mechanical hop cannot mint (§8.2e), so a full event under a redacted ceiling lands on metadata.
import { captureRank, type AepEvent, type CaptureLevel } from './envelope.js';
import { payloadShape, type FieldSpec } from './payloads.js';
import { annotationPaths, type FieldLevel } from './shape.js';

export type { CaptureLevel };
export type { FieldLevel };

const annotationCache = new Map<string, ReadonlyMap<string, FieldLevel> | null>();

/**
 * Dotted-path annotations of a type's payload (`answer.text`, `options[].label`), or undefined
 * for a type without annotations (foreign vendor or unknown types). The project's own vendor
 * types are annotated: instruction `text` is redacted-class (D1, design record).
 */
export function annotationsOf(type: string): ReadonlyMap<string, FieldLevel> | undefined {
  let hit = annotationCache.get(type);
  if (hit === undefined) {
    const shape = payloadShape(type);
    hit = shape ? annotationPaths(shape) : null;
    // Vendor type strings are unbounded; cache core types and the project's vendor verbs only.
    if (!type.startsWith('x.') || hit !== null) annotationCache.set(type, hit);
  }
  return hit ?? undefined;
}

/** The minimum level of one field path; unannotated fields count as `metadata` (AEP-0002 §5.1). */
export function fieldLevel(type: string, path: string): FieldLevel {
  return annotationsOf(type)?.get(path) ?? 'metadata';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every data field whose annotation is above `level` (the full validation tier's capture check). */
export function captureViolations(
  type: string,
  data: Record<string, unknown>,
  level: CaptureLevel,
): { path: string; needs: FieldLevel }[] {
  const notes = annotationsOf(type);
  const rank = captureRank(level);
  const out: { path: string; needs: FieldLevel }[] = [];
  const walk = (v: unknown, annotated: string, real: string): void => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        walk(x, `${annotated}[]`, `${real}[${i}]`);
      });
      return;
    }
    if (!isObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      const a = annotated ? `${annotated}.${k}` : k;
      const r = real ? `${real}.${k}` : k;
      const needs = notes?.get(a) ?? 'metadata';
      if (captureRank(needs) > rank) out.push({ path: r, needs });
      else walk(x, a, r);
    }
  };
  walk(data, '', '');
  return out;
}

/** Drops every key whose dotted-path annotation ranks above `level` (AEP-0002 §5.1 r3). Pure. */
function prune(v: unknown, notes: ReadonlyMap<string, FieldLevel>, level: CaptureLevel, path: string): unknown {
  if (Array.isArray(v)) return v.map((x) => prune(x, notes, level, `${path}[]`));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const p = path ? `${path}.${k}` : k;
    if (captureRank(notes.get(p) ?? 'metadata') > captureRank(level)) continue;
    out[k] = prune(x, notes, level, p);
  }
  return out;
}

/** The structural prompt of an attention request at `metadata` (AEP-0003 §9.2). */
export function synthesizePrompt(agent: string, kind: string | undefined, subject: string | undefined): string {
  return `${agent} requests ${kind ?? 'attention'}${subject !== undefined ? `: ${subject}` : ''}`;
}

const withLabelAsId = (item: unknown): unknown =>
  isObject(item) && 'label' in item ? { ...item, label: String(item.id) } : item;

/**
 * The `[metadata*]` degrade below `redacted` (aep-wire.md §2.4 step 6, AEP-0002 §5.3): prompts
 * are synthesised, labels become ids, answer values keep numbers and booleans only (a hop
 * cannot tell a choice id from free text without the field_spec).
 */
function degradeStructural(e: AepEvent, data: Record<string, unknown>): Record<string, unknown> {
  if (e.type === 'attention.requested') {
    const out: Record<string, unknown> = { ...data };
    if ('prompt' in out)
      out.prompt = synthesizePrompt(e.agent, typeof data.kind === 'string' ? data.kind : undefined, e.subject);
    if (Array.isArray(out.options)) out.options = out.options.map(withLabelAsId);
    if (Array.isArray(out.fields)) {
      out.fields = out.fields.map((f) => {
        const g = withLabelAsId(f);
        return isObject(g) && Array.isArray(g.choices) ? { ...g, choices: g.choices.map(withLabelAsId) } : g;
      });
    }
    return out;
  }
  if (
    (e.type === 'attention.answered' || e.type === 'control.attention.respond') &&
    isObject(data.answer) &&
    isObject(data.answer.values)
  ) {
    const values = Object.fromEntries(
      Object.entries(data.answer.values).filter(([, v]) => typeof v === 'number' || typeof v === 'boolean'),
    );
    return { ...data, answer: { ...data.answer, values } };
  }
  return data;
}

/**
 * Down-levels an event to a subscription ceiling (aep-wire.md §2.4, pinned by the downlevel
 * corpus DL1–DL18). Returns `e` itself when nothing changes; never mutates `e`; never up-levels.
 */
export function downLevel(e: AepEvent, ceiling: CaptureLevel): AepEvent {
  const level = e.capture ?? 'metadata';
  if (captureRank(ceiling) >= captureRank(level)) return e;
  // §8.2e: a mechanical hop cannot claim redaction it did not perform.
  const target: CaptureLevel = ceiling === 'redacted' && level === 'full' ? 'metadata' : ceiling;
  const out: AepEvent = { ...e, capture: target };
  if (target === 'none' || e.data === undefined) {
    delete out.data;
    return out;
  }
  const notes = annotationsOf(e.type);
  if (!notes) {
    delete out.data;
    return out;
  }
  let data = prune(e.data, notes, target, '') as Record<string, unknown>;
  if (captureRank(target) < captureRank('redacted')) data = degradeStructural(e, data);
  out.data = data;
  return out;
}

/**
 * For emitters: makes `data` honour the event's own declared level (AEP-0003 §9.1): fields
 * annotated above it are dropped and `[metadata*]` fields degrade at `metadata`. Returns `e`
 * itself when it already complies; never mutates `e`.
 */
export function stripAboveCapture(e: AepEvent): AepEvent {
  const level = e.capture ?? 'metadata';
  if (e.data === undefined) return e;
  if (level === 'none') {
    const out = { ...e };
    delete out.data;
    return out;
  }
  const notes = annotationsOf(e.type) ?? new Map<string, FieldLevel>();
  let data = prune(e.data, notes, level, '') as Record<string, unknown>;
  if (captureRank(level) < captureRank('redacted')) data = degradeStructural(e, data);
  if (JSON.stringify(data) === JSON.stringify(e.data)) return e;
  return { ...e, data };
}

/**
 * AEP-0006 gating of `answer.values` by an emitter that holds the field_spec (capture-gating
 * corpus): below `redacted`, string-field values and `other` free text are user text and are
 * dropped; numbers, booleans and closed choice ids are structural and stay. Keys with no field
 * in the spec are always dropped. Dropping `data` entirely at `none` is the caller's job.
 */
export function gateFormValues(
  fields: readonly FieldSpec[],
  values: Record<string, unknown>,
  ceiling: CaptureLevel,
): Record<string, unknown> {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const text = captureRank(ceiling) >= captureRank('redacted');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    const f = byId.get(k);
    if (!f) continue;
    if (text) {
      out[k] = v;
      continue;
    }
    const choice = (x: unknown): boolean => typeof x === 'string' && (f.choices ?? []).some((c) => c.id === x);
    const structural =
      (f.type === 'number' && typeof v === 'number') ||
      (f.type === 'boolean' && typeof v === 'boolean') ||
      (f.type === 'select' && (f.multi === true ? Array.isArray(v) && v.every(choice) : choice(v)));
    if (structural) out[k] = v;
  }
  return out;
}
