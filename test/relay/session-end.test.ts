// D45: who may stop a spawned session at the relay: the identity its `spawned_by` names, or a
// holder of the spawn right; anyone else is refused `unauthorized` with what would allow it. A
// cancel of a turn (scope run) and every other command pass untouched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../src/relay/acl.js';
import { mayEndSession } from '../../src/relay/session-end.js';
import type { AepEvent } from '../../src/protocol/index.js';

const party = (identity: string, spawn = false): Principal => ({
  identity,
  commands: ['*'],
  sessions: ['*'],
  emit: [],
  bound: true,
  authenticated: true,
  ...(spawn ? { spawn: true } : {}),
});
const cancel = (scope: string) =>
  ({ type: 'control.cancel', session: 'w-1', id: 'C1', data: { scope } }) as unknown as AepEvent;
const spawner = (s: string) => (s === 'w-1' ? 'orch' : undefined);

test('the spawner and a holder of the spawn right may stop a worker', () => {
  assert.is(mayEndSession(party('orch'), cancel('session'), spawner), undefined);
  assert.is(mayEndSession(party('ops', true), cancel('session'), spawner), undefined);
});

test('anyone else is refused unauthorized, naming the spawner and the right', () => {
  const r = mayEndSession(party('intruder'), cancel('session'), spawner);
  assert.is(r?.code, 'unauthorized');
  assert.is(r?.retry, false);
  assert.match(r?.detail ?? '', /intruder may not stop session w-1: only orch or a holder of the spawn right/);
  // A session no one spawned: no identity may stop it without the right.
  const none = mayEndSession(party('orch'), { ...cancel('session'), session: 'plain' } as AepEvent, spawner);
  assert.match(none?.detail ?? '', /only the identity that spawned it/);
});

test('a turn cancel and other commands are not this check', () => {
  assert.is(mayEndSession(party('intruder'), cancel('run'), spawner), undefined);
  const instruct = { type: 'x.codex.control.instruct', session: 'w-1', id: 'I1', data: {} } as unknown as AepEvent;
  assert.is(mayEndSession(party('intruder'), instruct, spawner), undefined);
});

test.run();
