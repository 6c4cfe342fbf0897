import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CORE_PAYLOAD_TYPES,
  NACK_REASONS,
  formValuesIssues,
  isDateTime,
  payloadShape,
  validatePayload,
  type FieldSpec,
  type PayloadMap,
} from '../../src/protocol/payloads.js';
import { REGISTRY } from '../../src/protocol/types.js';

const paths = (type: string, data: unknown): string[] => validatePayload(type, data).map((i) => i.path);

test('every registered type with a payload schema has a shape; reserved types have none', () => {
  for (const [type, status] of REGISTRY) {
    if (status === 'reserved') assert.is(payloadShape(type), undefined, type);
    else assert.ok(payloadShape(type), type);
  }
  assert.is(CORE_PAYLOAD_TYPES.length, REGISTRY.size - 2);
});

test('D1: x.{vendor}.control.instruct is { text: string }; unknown extra fields are ignored', () => {
  for (const v of ['claude-code', 'codex', 'qwen-code', 'vscode', 'hermes']) {
    assert.equal(validatePayload(`x.${v}.control.instruct`, { text: 'run the tests', priority: 9 }), [], v);
  }
  assert.equal(paths('x.codex.control.instruct', {}), ['data.text']);
  assert.equal(paths('x.codex.control.instruct', undefined), ['data.text']);
  assert.equal(paths('x.codex.control.instruct', { text: 42 }), ['data.text']);
  assert.equal(paths('x.codex.control.instruct', { text: null }), ['data.text']);
  assert.equal(paths('x.codex.control.instruct', []), ['data']);
  assert.match(
    validatePayload('x.codex.control.instruct', { text: 1 })[0]!.message,
    /x\.codex\.control\.instruct: data\.text must be a string/,
  );
});

test('send_input: { text, delivery?: queue|steer }; input.sent: { delivery? }', () => {
  assert.equal(validatePayload('x.cline.control.send_input', { text: 'x', delivery: 'steer' }), []);
  assert.equal(paths('x.cline.control.send_input', { text: 'x', delivery: 'immediate' }), ['data.delivery']);
  assert.equal(validatePayload('x.openhands.input.sent', {}), []);
  assert.equal(paths('x.cline.input.sent', { delivery: 'now' }), ['data.delivery']);
});

test('D9: instruction.delivered { queued_ms: integer >= 0 }', () => {
  assert.equal(validatePayload('x.codex.instruction.delivered', { queued_ms: 0 }), []);
  for (const bad of [-1, 1.5, '3', null])
    assert.equal(paths('x.codex.instruction.delivered', { queued_ms: bad }), ['data.queued_ms'], String(bad));
  assert.equal(paths('x.codex.instruction.delivered', {}), ['data.queued_ms']);
});

test('D10/D12: instruction.dropped { reason: session-ended|expired|delivery-unknown }', () => {
  for (const r of ['session-ended', 'expired', 'delivery-unknown'])
    assert.equal(validatePayload('x.hermes.instruction.dropped', { reason: r }), [], r);
  assert.equal(paths('x.hermes.instruction.dropped', { reason: 'lost' }), ['data.reason']);
});

test('foreign vendor types and unknown core types carry no payload rules', () => {
  assert.equal(validatePayload('x.acme.session.blob', { anything: [1, 2] }), []);
  assert.equal(validatePayload('tool.exploded', 5), []);
});

test('acks: control.accepted {}; control.rejected { reason ∈ nack reasons, detail? }', () => {
  assert.equal(validatePayload('control.accepted', undefined), []);
  for (const r of NACK_REASONS)
    assert.equal(validatePayload('control.rejected', { reason: r, detail: 'text is empty' }), [], r);
  assert.equal(paths('control.rejected', { reason: 'timeout' }), ['data.reason'], 'timeout is sender-synthesised only');
  assert.equal(paths('control.rejected', { reason: 'invalid', detail: 3 }), ['data.detail']);
});

test('core commands: respond needs answer, cancel needs scope, pause/resume take {}', () => {
  assert.equal(validatePayload('control.attention.respond', { answer: { option: 'allow' } }), []);
  assert.equal(paths('control.attention.respond', {}), ['data.answer']);
  assert.equal(paths('control.attention.respond', { answer: { values: [] } }), ['data.answer.values']);
  assert.equal(paths('control.cancel', { scope: 'turn' }), ['data.scope']);
  assert.equal(validatePayload('control.pause', {}), []);
  assert.equal(validatePayload('control.resume', { extra: true }), []);
});

test('attention: requested kind/prompt, options id+label, form fields, expires_at date-time', () => {
  const ok = {
    kind: 'permission',
    prompt: 'p',
    options: [{ id: 'allow', label: 'Allow' }],
    respond_via: ['control'],
    expires_at: '2026-07-03T10:00:00Z',
  };
  assert.equal(validatePayload('attention.requested', ok), []);
  assert.equal(paths('attention.requested', { ...ok, kind: 'vote' }), ['data.kind']);
  assert.equal(paths('attention.requested', { ...ok, options: [{ id: 'allow' }] }), ['data.options[0].label']);
  assert.equal(paths('attention.requested', { ...ok, respond_via: ['email'] }), ['data.respond_via[0]']);
  assert.equal(paths('attention.requested', { ...ok, expires_at: '2026-07-03T10:00:00' }), ['data.expires_at']);
  assert.equal(
    paths('attention.requested', { kind: 'form', prompt: 'p', fields: [{ id: '1', type: 'select', label: 'DB' }] }),
    ['data.fields[0].choices'],
  );
  assert.equal(
    paths('attention.requested', { kind: 'form', prompt: 'p', fields: [{ id: '1', type: 'date', label: 'D' }] }),
    ['data.fields[0].type'],
  );
  assert.equal(paths('attention.answered', { answer: { option: 'allow' }, via: 'email' }), ['data.via']);
  assert.equal(paths('attention.resolved', { resolution: 'closed' }), ['data.resolution']);
  assert.equal(paths('attention.timeout', { after_ms: -5 }), ['data.after_ms']);
  assert.equal(validatePayload('attention.routed', { to: 'telegram', via: 'bot' }), []);
});

test('session/run/tool/delegation/progress payloads', () => {
  assert.equal(paths('session.started', { parent: {} }), ['data.parent.session']);
  assert.equal(paths('session.ended', { reason: 'bored' }), ['data.reason']);
  assert.equal(paths('run.failed', {}), ['data.reason']);
  assert.equal(paths('run.finished', { cost: { total: 1 } }), ['data.cost.currency']);
  assert.equal(paths('tool.denied', { tool: { name: 'Bash' } }), ['data.by']);
  assert.equal(paths('tool.failed', { tool: { name: 'Bash' } }), ['data.error']);
  assert.equal(validatePayload('tool.completed', { tool: { name: 'Bash' }, result: { ok: true } }), []);
  assert.equal(paths('tool.completed', { tool: { name: 'Bash' }, result: 3 }), ['data.result']);
  assert.equal(paths('delegation.subagent.stopped', { duration_ms: 1.2 }), ['data.duration_ms']);
  assert.equal(paths('progress.status', { percent: 101 }), ['data.percent']);
  assert.equal(validatePayload('progress.status', { percent: 12.5, phase: 'scan' }), []);
});

test('AEP-0006 form values: required fields, choice ids, free text only with other', () => {
  const fields: FieldSpec[] = [
    { id: 'name', type: 'string', label: 'Name', required: true },
    { id: 'n', type: 'number', label: 'N', min: 1, max: 5 },
    { id: 'ok', type: 'boolean', label: 'OK' },
    {
      id: 'db',
      type: 'select',
      label: 'DB',
      choices: [
        { id: '1', label: 'PG' },
        { id: '2', label: 'SQLite' },
      ],
    },
    { id: 'regions', type: 'select', label: 'R', multi: true, choices: [{ id: 'a', label: 'A' }] },
    { id: 'alt', type: 'select', label: 'Alt', other: true, choices: [{ id: '1', label: 'x' }] },
  ];
  assert.equal(
    formValuesIssues(fields, { name: 'api', n: 3, ok: true, db: '2', regions: ['a'], alt: 'free text' }),
    [],
  );
  const p = (values: Record<string, unknown>): string[] => formValuesIssues(fields, values).map((i) => i.path);
  assert.equal(p({}), ['answer.values.name']);
  assert.equal(p({ name: 'x', db: 'MariaDB' }), ['answer.values.db']);
  assert.equal(p({ name: 'x', regions: 'a' }), ['answer.values.regions']);
  assert.equal(p({ name: 'x', regions: ['a', 'zz'] }), ['answer.values.regions']);
  assert.equal(p({ name: 'x', n: 9 }), ['answer.values.n']);
  assert.equal(p({ name: 'x', ok: 'yes' }), ['answer.values.ok']);
  assert.equal(p({ name: 7 }), ['answer.values.name']);
});

test('PayloadMap: one type per AEP type string, vendor types by pattern', () => {
  const instruct: PayloadMap['x.claude-code.control.instruct'] = { text: 'x' };
  const delivered: PayloadMap['x.codex.instruction.delivered'] = { queued_ms: 3 };
  const dropped: PayloadMap['x.hermes.instruction.dropped'] = { reason: 'expired' };
  const rejected: PayloadMap['control.rejected'] = { reason: 'invalid', detail: 'queue full (20)' };
  const requested: PayloadMap['attention.requested'] = {
    kind: 'permission',
    prompt: 'p',
    options: [{ id: 'allow', label: 'Allow' }],
  };
  // @ts-expect-error: reason is a closed set
  const wrong: PayloadMap['x.hermes.instruction.dropped'] = { reason: 'lost' };
  for (const [t, d] of [
    ['x.claude-code.control.instruct', instruct],
    ['x.codex.instruction.delivered', delivered],
    ['x.hermes.instruction.dropped', dropped],
    ['control.rejected', rejected],
    ['attention.requested', requested],
  ] as const) {
    assert.equal(validatePayload(t, d), [], t);
  }
  assert.equal(paths('x.hermes.instruction.dropped', wrong), ['data.reason']);
});

test('isDateTime: the character-code path agrees with the RFC 3339 pattern and calendar', () => {
  const reference = (s: string): boolean => {
    const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(s);
    if (!m) return false;
    const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as number[];
    const days = new Date(Date.UTC(y!, mo!, 0)).getUTCDate();
    const offsetOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
    return mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= days && h! <= 23 && mi! <= 59 && se! <= 60 && offsetOk;
  };
  const samples = [
    '2026-07-03T10:00:00Z',
    '2026-07-03t10:00:00.123456z',
    '2024-02-29T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-12-31T23:59:60Z',
    '2026-12-31T23:59:61Z',
    '2026-04-31T00:00:00Z',
    '2026-07-03T10:00:00.Z',
    '2026-07-03T10:00:00+02:00',
    '2026-07-03T10:00:00-24:00',
    '2026-07-03T10:00:00',
    '2026-07-03T10:00:00ZZ',
    '\uff12\uff10' + '26-07-03T10:00:00Z',
    '2026-07-03T1a:00:00Z',
    '2026/07/03T10:00:00Z',
    ' 2026-07-03T10:00:00Z',
    '2026-07-03T10:00:00Z ',
  ];
  for (const s of samples) assert.is(isDateTime(s), reference(s), s);
  // Every single-character change of a valid time, over a set of characters that matter.
  const good = '2024-02-29T23:59:59.5Z';
  for (let i = 0; i < good.length; i += 1) {
    for (const c of '0123456789-:.TtZz+ /a\u0660') {
      const s = good.slice(0, i) + c + good.slice(i + 1);
      assert.is(isDateTime(s), reference(s), s);
    }
  }
});

test.run();
