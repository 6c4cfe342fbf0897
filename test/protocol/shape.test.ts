import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  annotationPaths,
  anyObject,
  arrayOf,
  bool,
  either,
  int,
  num,
  obj,
  oneOf,
  str,
  type Infer,
  type ShapeIssue,
} from '../../src/protocol/shape.js';

const run = (
  s: { check: (v: unknown, p: string, o: ShapeIssue[], c?: number) => void },
  v: unknown,
  ceiling?: number,
): string[] => {
  const out: ShapeIssue[] = [];
  s.check(v, 'data', out, ceiling);
  return out.map((i) => i.path);
};

const shape = obj(
  { id: str(), secret: str().at('redacted') },
  {
    n: int({ min: 0 }),
    ratio: num({ min: 0, max: 1 }),
    on: bool(),
    kind: oneOf(['a', 'b']),
    items: arrayOf(obj({ label: str().at('full') })),
    blob: either(anyObject(), str()),
  },
);

test('open objects: required, optional, typed when present, unknown keys pass', () => {
  assert.equal(run(shape, { id: 'x', secret: 's', extra: [1] }), []);
  assert.equal(run(shape, {}), ['data.id', 'data.secret']);
  assert.equal(run(shape, { id: 1, secret: 's', n: -1, ratio: 2, on: 'y', kind: 'c', items: [{}], blob: 3 }), [
    'data.id',
    'data.n',
    'data.ratio',
    'data.on',
    'data.kind',
    'data.items[0].label',
    'data.blob',
  ]);
});

test('a required field gated above the event capture may be absent (AEP-0002 §5.1)', () => {
  assert.equal(run(shape, { id: 'x' }, 1), [], 'metadata: secret is gated away');
  assert.equal(run(shape, { id: 'x' }, 2), ['data.secret'], 'redacted: secret must be there');
  assert.equal(run(shape, { id: 'x', secret: 's', items: [{}] }, 2), [], 'full-gated item label absent at redacted');
});

test('refine adds a rule that runs only when the structure is right', () => {
  const even = int().refine((v, p, out) => {
    if (v % 2 !== 0) out.push({ path: p, message: `${p} must be even` });
  });
  assert.equal(run(even, 3), ['data']);
  assert.equal(run(even, 'x'), ['data'], 'the type error alone, no refine error');
  assert.equal(run(even, 4), []);
});

test('annotationPaths: dotted paths, [] for items, levels kept', () => {
  const paths = annotationPaths(shape);
  assert.is(paths.get('secret'), 'redacted');
  assert.is(paths.get('items'), 'metadata');
  assert.is(paths.get('items[].label'), 'full');
  assert.is(paths.get('id'), 'metadata');
});

test('Infer gives the payload type', () => {
  const v: Infer<typeof shape> = { id: 'x', secret: 's', kind: 'a', items: [{ label: 'l' }] };
  // @ts-expect-error: kind is a closed set
  const bad: Infer<typeof shape> = { id: 'x', secret: 's', kind: 'z' };
  assert.equal(run(shape, v), []);
  assert.equal(run(shape, bad), ['data.kind']);
});

test.run();
