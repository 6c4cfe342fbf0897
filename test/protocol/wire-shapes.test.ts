import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordShape, shapeOf } from '../../src/protocol/wire-shapes.js';

test('a shape is key paths and types, never a value', () => {
  const body = {
    hook_event_name: 'PreToolUse',
    tool_input: { command: 'echo the-secret-text', args: [{ n: 1 }] },
    ok: true,
    gone: null,
  };
  const shape = shapeOf(body);
  assert.equal(shape, [
    'gone:null',
    'hook_event_name:string',
    'ok:boolean',
    'tool_input.args:array',
    'tool_input.args[].n:number',
    'tool_input.args[]:object',
    'tool_input.command:string',
    'tool_input:object',
  ]);
  assert.not.ok(JSON.stringify(shape).includes('the-secret-text'));
});

test('with AEP_WIRE_SHAPES set, each distinct shape is written once, to a private file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-shapes-'));
  const file = join(dir, 'shapes.jsonl');
  const before = process.env.AEP_WIRE_SHAPES;
  try {
    delete process.env.AEP_WIRE_SHAPES;
    recordShape('hook', 'Stop', { a: 1 });
    assert.not.ok(existsSync(file), 'unset: nothing is written');
    process.env.AEP_WIRE_SHAPES = file;
    recordShape('hook', 'Stop', { a: 1, text: 'private words' });
    recordShape('hook', 'Stop', { a: 2, text: 'other words' });
    recordShape('hook', 'Stop', { a: 2, text: 'x', extra: [] });
    recordShape('hook', 'PreToolUse', { a: 1, text: 'y' });
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(
      lines.map((l) => [l.src, l.kind, l.keys.length]),
      [
        ['hook', 'Stop', 2],
        ['hook', 'Stop', 3],
        ['hook', 'PreToolUse', 2],
      ],
    );
    assert.not.ok(readFileSync(file, 'utf8').includes('words'));
    assert.is(statSync(file).mode & 0o777, 0o600);
  } finally {
    if (before === undefined) delete process.env.AEP_WIRE_SHAPES;
    else process.env.AEP_WIRE_SHAPES = before;
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
