// Runs a vendor surface over an AEP-0002 Annex A mapping fixture (read in place from
// ../shared/aep/fixtures/mappings) and returns, per entry, what the surface produced beside what
// the fixture expects. A held hook's attention.requested is assembled by the runtime from the
// classification as {kind, prompt, options, respond_via: ["control"]} (D14), so it is compared
// from there.
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { HookClass, ObservationSpec, VendorSurface } from '../../src/streams/surface.js';
import { aepFile, projectRoot, readJson, referenceDir } from './shared-dir.js';

type Expected = { type: string; data?: unknown; subject?: string };
interface Entry {
  input: Record<string, unknown>;
  expected: Expected | Expected[] | null;
}
interface Fixture {
  hooks: Record<string, Entry>;
  fallback?: Entry;
}

const strip = (e: Expected): Expected => {
  const out: Expected = { type: e.type, data: e.data ?? {} };
  if (e.subject !== undefined) out.subject = e.subject;
  return out;
};

const produced = (o: ObservationSpec): Expected => {
  const out: Expected = { type: o.type, data: o.data ?? {} };
  if (o.subject !== undefined) out.subject = o.subject;
  return out;
};

export interface FixtureCase {
  name: string;
  expected: Expected[];
  actual: Expected[];
}

export function fixtureCases(surface: VendorSurface, token: string): FixtureCase[] {
  const fixture = readJson<Fixture>(aepFile('fixtures', 'mappings', `${token}.json`));
  const entries: [string, Entry][] = Object.entries(fixture.hooks);
  if (fixture.fallback !== undefined) entries.push(['(fallback)', fixture.fallback]);
  return entries.map(([name, entry]) => {
    const expected =
      entry.expected === null ? [] : (Array.isArray(entry.expected) ? entry.expected : [entry.expected]).map(strip);
    const c = surface.classify(entry.input);
    const actual = c.observations.map(produced);
    if (c.class.kind === 'held') {
      const r = c.class.request;
      const data: Record<string, unknown> = { kind: r.kind, prompt: r.prompt };
      if (r.options !== undefined) data.options = r.options;
      if (r.fields !== undefined) data.fields = r.fields;
      data.respond_via = ['control'];
      actual.push(
        r.subject === undefined
          ? { type: 'attention.requested', data }
          : { type: 'attention.requested', data, subject: r.subject },
      );
    }
    if (c.class.kind === 'end') {
      // The runtime emits session.ended itself at the end moment, after any drops (D10), with the
      // reason the table read from this hook (actor-host stamps `data.reason`).
      actual.push({ type: 'session.ended', data: { reason: c.class.reason } });
    }
    return { name, expected, actual };
  });
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** Validates a core-type observation's payload against its AEP schema; `undefined` when it passes. */
export function schemaProblem(o: ObservationSpec): string | undefined {
  if (o.type.startsWith('x.')) return undefined;
  const path = aepFile('schemas', 'types', `${o.type}.schema.json`);
  if (!existsSync(path)) return `no schema for ${o.type}`;
  const schema = readJson<{ $id: string }>(path);
  const validate = ajv.getSchema(schema.$id) ?? ajv.compile(schema);
  return validate(o.data ?? {}) ? undefined : `${o.type}: ${ajv.errorsText(validate.errors)}`;
}

/**
 * Where an evidence string points: `e2e/<token>#<test>` names a test in test/e2e/<token>.e2e.ts,
 * `<doc> §<n>` a section of a reference document. Returns a problem, or undefined when it resolves.
 */
export function evidenceProblem(evidence: string): string | undefined {
  const t = /^e2e\/([a-z-]+)#(.+)$/.exec(evidence);
  if (t) {
    const file = join(projectRoot, 'test', 'e2e', `${t[1]}.e2e.ts`);
    if (!existsSync(file)) return `${file} missing`;
    const text = readFileSync(file, 'utf8');
    const quoted = [`'${t[2]}'`, `'${t[2]!.replace(/'/g, "\\'")}'`, `"${t[2]}"`, `\`${t[2]}\``];
    return quoted.some((q) => text.includes(`test(${q}`)) ? undefined : `no test named "${t[2]}" in ${file}`;
  }
  const d = /^([a-z-]+) §(\d+(?:\.\d+)*)$/.exec(evidence);
  if (!d) return `"${evidence}" is neither an e2e test nor a reference section`;
  const doc = join(referenceDir, `${d[1]}.md`);
  if (!existsSync(doc)) return `${doc} missing`;
  const heading = new RegExp(`^#{2,4} ${d[2]!.replace(/\./g, '\\.')}[ .]`, 'm');
  return heading.test(readFileSync(doc, 'utf8')) ? undefined : `no section ${d[2]} in ${doc}`;
}

/** A classification in one word: eligible, ineligible, held:<hold> or end. */
export const classSummary = (c: HookClass): string =>
  c.kind === 'moment' ? (c.eligible ? 'eligible' : 'ineligible') : c.kind === 'held' ? `held:${c.hold}` : 'end';

/** The hook inputs of a vendor's mapping fixture, by fixture entry name. */
export function fixtureInputs(token: string): Record<string, Record<string, unknown>> {
  const fixture = readJson<{ hooks: Record<string, { input: Record<string, unknown> }> }>(
    aepFile('fixtures', 'mappings', `${token}.json`),
  );
  return Object.fromEntries(Object.entries(fixture.hooks).map(([k, v]) => [k, v.input]));
}

/** Recorded hook inputs (event → input) against the classification each should get (event → summary). */
export function assertSamplesClassify(
  surface: VendorSurface,
  samples: Record<string, Record<string, unknown>>,
  expected: Record<string, string>,
  coverage?: string,
): void {
  assert.equal(Object.keys(samples).sort(), Object.keys(expected).sort(), coverage);
  for (const [event, input] of Object.entries(samples)) {
    const c = surface.classify(input);
    assert.is(c.event, event);
    assert.is(c.session, input.session_id);
    assert.is(classSummary(c.class), expected[event], event);
  }
}
