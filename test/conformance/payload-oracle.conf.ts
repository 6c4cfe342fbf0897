// The standard's per-type JSON schemas are the oracle for the hand-written payload shapes:
// on every golden payload and on systematic mutations of it, both must give the same verdict.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequire } from 'node:module';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { CORE_PAYLOAD_TYPES, validatePayload } from '../../src/protocol/payloads.js';
import { corpusAvailable, listDir, readJson, readJsonl, report } from './corpus.js';

// ajv ships CommonJS; its default export is the class.
const require = createRequire(import.meta.url);
const Ajv2020 = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js').default;
const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; required?: string[] };

/** Values of every JSON kind and the edges the schemas draw (bounds, integers, date-times). */
const CANDIDATES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  101,
  '',
  'x',
  true,
  [],
  {},
  [{}],
  ['x'],
  [{ id: 'a', label: 'A' }],
  { name: 'n' },
  { currency: 'USD' },
  { session: 's' },
  { id: '1', type: 'select', label: 'L' },
  '2026-07-03T10:00:00Z',
  '2026-07-03T10:00:00',
  'control',
  'permission',
  'session-ended',
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every variant of `data` with one field removed, retyped or added, recursively. */
function mutations(data: unknown, schema: Schema | undefined): unknown[] {
  const out: unknown[] = [];
  if (isObj(data) && schema?.properties) {
    for (const [k, sub] of Object.entries(schema.properties)) {
      if (k in data) {
        const { [k]: _drop, ...rest } = data;
        out.push(rest);
        for (const inner of mutations(data[k], sub)) out.push({ ...data, [k]: inner });
      }
      for (const c of CANDIDATES) out.push({ ...data, [k]: c });
    }
  }
  if (Array.isArray(data) && schema?.items) {
    if (data.length > 0) for (const inner of mutations(data[0], schema.items)) out.push([inner, ...data.slice(1)]);
    for (const c of CANDIDATES) out.push([...data, c]);
  }
  return out;
}

if (corpusAvailable('payload-oracle')) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const files = listDir('schemas/types').filter((f) => f.endsWith('.schema.json'));
  const golden = readJsonl<AepEvent>('fixtures/golden/golden.jsonl');

  test('payload-oracle: every standard payload schema has a hand-written shape', () => {
    const types = files.map((f) => f.replace(/\.schema\.json$/, ''));
    assert.equal([...types].sort(), [...CORE_PAYLOAD_TYPES].sort());
  });

  test('payload-oracle: golden payloads and their mutations get the schema verdict', () => {
    let goldenChecked = 0;
    let variants = 0;
    let invalid = 0;
    for (const f of files) {
      const type = f.replace(/\.schema\.json$/, '');
      const schema = readJson<Schema>(`schemas/types/${f}`);
      const validate = ajv.compile(schema);
      const seeds = golden.filter((e) => e.type === type).map((e) => e.data ?? {});
      for (const d of seeds) {
        assert.ok(validate(d), `${type} golden payload valid per schema`);
        assert.equal(validatePayload(type, d), [], `${type} golden payload valid per shape`);
        goldenChecked++;
      }
      for (const seed of seeds.length > 0 ? seeds : [{}]) {
        for (const m of [seed, ...mutations(seed, schema)]) {
          const want = validate(m) === true;
          const issues = validatePayload(type, m);
          assert.is(
            issues.length === 0,
            want,
            `${type} ${JSON.stringify(m)}: schema says ${want ? 'valid' : 'invalid'}, shape says ${JSON.stringify(issues)}`,
          );
          variants++;
          if (!want) invalid++;
        }
      }
    }
    report('payload golden vs schema', goldenChecked, golden.filter((e) => !e.type.startsWith('x.')).length);
    report(`payload mutations vs schema (${files.length} types, ${invalid} invalid)`, variants, variants);
    assert.ok(invalid > 1000 && variants - invalid > 1000, 'both verdicts are exercised');
  });
}

test.run();
