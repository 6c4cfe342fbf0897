import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CATEGORIES,
  REGISTRY,
  TYPE_PATTERN,
  deliveredType,
  droppedType,
  inputSentType,
  instructType,
  isCommandType,
  parseVendorType,
  scopeOf,
  sendInputType,
  typeStatus,
  vendorType,
} from '../../src/protocol/types.js';

test('grammar: 13 categories; vendor types need at least two segments after the vendor', () => {
  assert.is(CATEGORIES.length, 13);
  for (const t of ['session.started', 'control.attention.respond', 'x.claude-code.session.config_change', 'x.v.a.b.c'])
    assert.ok(TYPE_PATTERN.test(t), t);
  for (const t of ['tool', 'banana.peeled', 'tool.Completed', 'x.acme.foo', 'x..a.b', 'x.acme.foo-bar.baz'])
    assert.not.ok(TYPE_PATTERN.test(t), t);
});

test('scope: agent, command (incl. attention.routed and vendor control verbs), session', () => {
  assert.is(scopeOf('agent.presence'), 'agent');
  for (const t of [
    'control.attention.respond',
    'control.cancel',
    'control.pause',
    'control.resume',
    'attention.routed',
    'x.codex.control.instruct',
  ])
    assert.is(scopeOf(t), 'command', t);
  for (const t of ['control.accepted', 'control.rejected', 'x.codex.instruction.delivered', 'x.acme.agent.ping'])
    assert.is(scopeOf(t), 'session', t);
  assert.ok(isCommandType('x.cline.control.send_input'));
  assert.not.ok(isCommandType('attention.routed'), 'routed is foreign-emitter but not a command');
  assert.not.ok(isCommandType('control.accepted'));
});

test('vendor type builders and parser', () => {
  assert.is(instructType('claude-code'), 'x.claude-code.control.instruct');
  assert.is(sendInputType('cline'), 'x.cline.control.send_input');
  assert.is(deliveredType('codex'), 'x.codex.instruction.delivered');
  assert.is(droppedType('hermes'), 'x.hermes.instruction.dropped');
  assert.is(inputSentType('openhands'), 'x.openhands.input.sent');
  assert.throws(() => vendorType('Bad Vendor', 'control.instruct'));
  assert.equal(parseVendorType('x.qwen-code.control.instruct'), {
    vendor: 'qwen-code',
    category: 'control',
    rest: 'instruct',
  });
  assert.is(parseVendorType('control.cancel'), undefined);
});

test('registry: 46 core types, 14 mandatory, 2 reserved; vendor types are not registered', () => {
  assert.is(REGISTRY.size, 46);
  assert.is([...REGISTRY.values()].filter((s) => s === 'mandatory').length, 14);
  assert.is(typeStatus('message.agent.replied'), 'reserved');
  assert.is(typeStatus('x.codex.control.instruct'), 'vendor');
  assert.is(typeStatus('tool.exploded'), undefined);
});

test.run();
