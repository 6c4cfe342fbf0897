import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkText, decideInstruct, decideUnknownSession, readAnswer } from '../../src/machines/gate.js';
import { instructCmd } from '../support/session-steps.js';
import { decisionsFrom, noDecisions } from '../../src/machines/decisions.js';

test('D2: checkText names the rule and never carries the text', () => {
  assert.equal(checkText({ text: 'ok' }), { text: 'ok' });
  assert.is((checkText(undefined) as { rule: string }).rule, 'text-not-string');
  assert.is((checkText({ text: '\u00a0 ' }) as { rule: string }).rule, 'text-empty');
});

test('D4: dedupe is checked before everything else', () => {
  const c = instructCmd('c1', '');
  const d = decideInstruct(
    { decisions: decisionsFrom({ [`${c.source}\u0000c1`]: 'accepted' }), ended: true, pending: 99 },
    c,
    false,
  );
  assert.is(d.kind, 'duplicate');
});

test('D5 before D6: the gate answers unsupported even for an ended session', () => {
  const d = decideInstruct({ decisions: noDecisions(), ended: true, pending: 0 }, instructCmd('c1', 'x'), false);
  assert.is(d.kind === 'reject' && d.rejection.rule, 'gate-off');
});

test('D6: a command for a session never seen is refused "unknown session"', () => {
  const d = decideUnknownSession(noDecisions(), instructCmd('c1', 'x'));
  assert.ok(d.kind === 'reject');
  assert.equal(d.kind === 'reject' && [d.rejection.reason, d.rejection.detail], ['refused', 'unknown session']);
});

test('D14: answers resolve against the request options', () => {
  const perm = { kind: 'permission' as const, prompt: 'p' };
  assert.equal(readAnswer(perm, { option: 'allow' }), { option: 'allow' });
  assert.is(readAnswer(perm, { option: 'maybe' }), undefined);
  assert.equal(readAnswer(perm, { text: 'DENY' }), { option: 'deny' });
  assert.equal(readAnswer(perm, { text: 'allow it please' }), { option: 'deny', message: 'allow it please' });
  assert.is(readAnswer(perm, 'allow'), undefined);
});

test.run();
