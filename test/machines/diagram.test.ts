import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { createMachine } from 'xstate';
import { sessionMermaid } from '../../src/machines/diagram.js';

test('the diagram is read from the session machine: every state and the end transition appear', () => {
  const m = sessionMermaid();
  assert.ok(m.startsWith('stateDiagram-v2\n'));
  for (const line of [
    '[*] --> idle',
    'state "holding" as holding {',
    '[*] --> holding_permission',
    'idle --> queued : always [hasPending]',
    'queued --> ended : hook.end / endSession',
    'holding --> idle : always [isReleased]',
    'hook.moment / deliverPrefix',
  ])
    assert.ok(m.includes(line), line);
  assert.not.ok(m.includes('ended --> ended'), 'ended handles hook.end itself');
});

test('a different machine gives a different diagram', () => {
  const other = createMachine({ id: 'x', initial: 'a', states: { a: { on: { go: 'b' } }, b: {} } });
  const m = sessionMermaid(other);
  assert.ok(m.includes('a --> b : go'));
  assert.not.ok(m.includes('holding'));
});

test('docs/architecture.md shows the diagram the session machine gives', () => {
  const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
  const block = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block, 'docs/architecture.md has a mermaid block');
  assert.is(block!.trimEnd(), sessionMermaid().trimEnd());
});

test.run();
