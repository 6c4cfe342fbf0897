import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { CAPTURE_LEVELS, captureRank, type AepEvent, type CaptureLevel } from '../../src/protocol/envelope.js';
import {
  annotationsOf,
  captureViolations,
  downLevel,
  fieldLevel,
  gateFormValues,
  stripAboveCapture,
  synthesizePrompt,
} from '../../src/protocol/capture.js';
import { validateEvent } from '../../src/protocol/validate.js';

const cmd = (over: Partial<AepEvent> = {}): AepEvent => ({
  aep: '0.1',
  id: 'C1',
  type: 'x.claude-code.control.instruct',
  time: '2026-07-03T10:00:00Z',
  source: 'aep://laptop/agent/aep-steer',
  agent: 'aep-steer',
  session: 's1',
  capture: 'redacted',
  data: { text: 'INSTRUCTION-CANARY please run the tests' },
  ...over,
});

test('annotations: dotted paths, [] for array items, vendor verbs annotated', () => {
  assert.is(fieldLevel('attention.answered', 'answer.text'), 'redacted');
  assert.is(fieldLevel('attention.answered', 'answer.option'), 'metadata');
  assert.is(fieldLevel('attention.requested', 'options[].label'), 'metadata');
  assert.is(fieldLevel('attention.requested', 'fields[].choices[].label'), 'metadata');
  assert.is(fieldLevel('attention.requested', 'context'), 'full');
  assert.is(fieldLevel('resource.retrieval.returned', 'documents[].content'), 'full');
  assert.is(fieldLevel('tool.completed', 'result'), 'full');
  assert.is(fieldLevel('x.codex.control.instruct', 'text'), 'redacted');
  assert.is(fieldLevel('x.cline.control.send_input', 'text'), 'redacted');
  assert.is(fieldLevel('x.cline.control.send_input', 'delivery'), 'metadata');
  assert.is(fieldLevel('x.codex.instruction.delivered', 'queued_ms'), 'metadata');
  assert.is(annotationsOf('x.acme.session.blob'), undefined);
  assert.is(fieldLevel('x.acme.session.blob', 'anything'), 'metadata');
});

test('a metadata subscriber never sees instruction text', () => {
  const e = cmd();
  const out = downLevel(e, 'metadata');
  assert.is(out.capture, 'metadata');
  assert.equal(out.data, {});
  assert.not.ok(JSON.stringify(out).includes('INSTRUCTION-CANARY'));
  assert.is(e.data!.text, 'INSTRUCTION-CANARY please run the tests', 'input untouched');
  const send = downLevel(
    cmd({ type: 'x.cline.control.send_input', data: { text: 'INSTRUCTION-CANARY', delivery: 'steer' } }),
    'metadata',
  );
  assert.equal(send.data, { delivery: 'steer' });
  const none = downLevel(e, 'none');
  assert.is(none.capture, 'none');
  assert.ok(!('data' in none));
});

test('downLevel: full instruct under a redacted ceiling lands on metadata (§8.2e)', () => {
  const out = downLevel(cmd({ capture: 'full' }), 'redacted');
  assert.is(out.capture, 'metadata');
  assert.equal(out.data, {});
});

test('downLevel: audit events keep their structural fields at metadata', () => {
  const delivered = cmd({
    type: 'x.codex.instruction.delivered',
    seq: 4,
    capture: 'redacted',
    data: { queued_ms: 120 },
  });
  assert.equal(downLevel(delivered, 'metadata').data, { queued_ms: 120 });
  const foreign = cmd({ type: 'x.acme.session.blob', seq: 4, capture: 'redacted', data: { a: 1 } });
  assert.ok(!('data' in downLevel(foreign, 'metadata')), 'unannotated vendor types lose data wholesale');
});

test('downLevel: never up-levels; unchanged returns the same object; default level is metadata', () => {
  const e = cmd();
  assert.is(downLevel(e, 'full'), e);
  assert.is(downLevel(e, 'redacted'), e);
  const plain = cmd({ capture: undefined, type: 'x.codex.instruction.delivered', data: { queued_ms: 1 } });
  delete plain.capture;
  assert.is(downLevel(plain, 'metadata'), plain);
  assert.is(downLevel(plain, 'none').capture, 'none');
});

test('downLevel: attention prompts and labels degrade structurally below redacted', () => {
  const req: AepEvent = {
    aep: '0.1',
    id: 'R1',
    type: 'attention.requested',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/codex/session/s1',
    agent: 'codex',
    session: 's1',
    seq: 3,
    capture: 'redacted',
    data: {
      kind: 'permission',
      prompt: 'Allow rm -rf /tmp/x?',
      options: [{ id: 'allow', label: 'Yes, do it' }],
      context: { raw: 1 },
    },
  };
  const out = downLevel(req, 'metadata');
  assert.equal(out.data, {
    kind: 'permission',
    prompt: 'codex requests permission',
    options: [{ id: 'allow', label: 'allow' }],
  });
  assert.is(synthesizePrompt('codex', undefined, 'Bash'), 'codex requests attention: Bash');
});

test('stripAboveCapture: an emitter drops fields above its own level, and returns compliant events as is', () => {
  const e = cmd({ capture: 'metadata' });
  const out = stripAboveCapture(e);
  assert.equal(out.data, {});
  assert.equal(validateEvent(out), []);
  const ok = cmd();
  assert.is(stripAboveCapture(ok), ok);
  const none = stripAboveCapture(cmd({ capture: 'none' }));
  assert.ok(!('data' in none));
  const req: AepEvent = {
    aep: '0.1',
    id: 'R1',
    type: 'attention.requested',
    subject: 'Bash',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/codex/session/s1',
    agent: 'codex',
    session: 's1',
    seq: 3,
    data: { kind: 'permission', prompt: 'Run rm -rf build?' },
  };
  assert.is((stripAboveCapture(req).data as { prompt: string }).prompt, 'codex requests permission: Bash');
});

test('captureViolations: real paths with indices', () => {
  assert.equal(
    captureViolations('tool.completed', { tool: { name: 'x' }, result: 'r', result_redacted: 'q' }, 'redacted'),
    [{ path: 'result', needs: 'full' }],
  );
  assert.equal(
    captureViolations(
      'resource.citation.recorded',
      { citations: [{ cited_text: 'x', source: { title: 't' } }] },
      'metadata',
    ),
    [
      { path: 'citations[0].cited_text', needs: 'full' },
      { path: 'citations[0].source.title', needs: 'redacted' },
    ],
  );
});

test('gateFormValues: metadata keeps structural answers only; unknown keys always dropped', () => {
  const fields = [
    { id: 'name', type: 'string' as const, label: 'N' },
    { id: 'db', type: 'select' as const, label: 'DB', other: true, choices: [{ id: '1', label: 'PG' }] },
    { id: 'n', type: 'number' as const, label: 'n' },
  ];
  assert.equal(gateFormValues(fields, { name: 'x', db: '1', n: 2, zz: 1 }, 'metadata'), { db: '1', n: 2 });
  assert.equal(gateFormValues(fields, { db: 'MariaDB' }, 'metadata'), {});
  assert.equal(gateFormValues(fields, { name: 'x', db: 'MariaDB', zz: 1 }, 'full'), { name: 'x', db: 'MariaDB' });
});

const level = fc.constantFrom<CaptureLevel>(...CAPTURE_LEVELS);
const anyEvent = fc.record({
  type: fc.constantFrom(
    'attention.answered',
    'attention.requested',
    'tool.completed',
    'x.codex.control.instruct',
    'x.acme.session.blob',
    'session.started',
  ),
  capture: level,
  data: fc.option(
    fc.dictionary(
      fc.constantFrom('text', 'answer', 'prompt', 'result', 'label', 'tool', 'cwd', 'options'),
      fc.jsonValue(),
    ),
    { nil: undefined },
  ),
});

test('property: downLevel never raises the level, never mutates, lands at or below the ceiling, is idempotent', () => {
  fc.assert(
    fc.property(anyEvent, level, (spec, ceiling) => {
      const e = {
        aep: '0.1',
        id: 'P',
        time: '2026-07-03T10:00:00Z',
        source: 'aep://h/agent/a',
        agent: 'a',
        session: 's',
        ...spec,
      } as AepEvent;
      if (spec.data === undefined) delete e.data;
      const before = JSON.stringify(e);
      const out = downLevel(e, ceiling);
      assert.is(JSON.stringify(e), before);
      const r = captureRank(out.capture);
      assert.ok(r <= captureRank(e.capture));
      assert.ok(r <= captureRank(ceiling) || out === e);
      assert.equal(downLevel(out, ceiling), out);
      if (out !== e && out.data !== undefined) assert.equal(captureViolations(out.type, out.data, out.capture!), []);
    }),
    { numRuns: 500 },
  );
});

test.run();
