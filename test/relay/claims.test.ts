// The claim table on its own, with a clock the test moves (D19): a live claim owns its session,
// the same identity takes it back at once after a close, another identity only after the lease,
// one-user parties may share a session (AEP `ambiguous`), and lapsed claims are forgotten.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accessPolicy, type Principal } from '../../src/relay/acl.js';
import { ClaimTable, type ClaimHolder } from '../../src/relay/claims.js';

const policy = accessPolicy({
  token: 'shared',
  entries: [
    { token: 'a', identity: 'adapter', emit: [{ agents: ['claude-code'], sessions: ['*'] }] },
    { token: 'b', identity: 'other', emit: [{ agents: ['claude-code'], sessions: ['*'] }] },
  ],
});
const who = (token: string): Principal => policy.authenticate(token)!;
const holder = (token: string): ClaimHolder => ({ principal: who(token), claims: new Set() });

let now = 0;
const table = () => new ClaimTable<ClaimHolder>(1000, () => now);

test('a live claim owns its session against every other connection, its own identity included', () => {
  now = 0;
  const t = table();
  const first = holder('a');
  assert.equal(t.claim('s', first), { ok: true, fresh: true });
  assert.equal(t.claim('s', first), { ok: true, fresh: false });
  for (const rival of [holder('a'), holder('b')]) {
    const v = t.claim('s', rival);
    assert.is(v.ok, false);
    assert.match(!v.ok ? v.detail : '', 'claimed by another live connection');
  }
  assert.ok(t.holds('s', first));
  assert.is(t.ownerOf('s'), 'adapter');
});

test('after a close: the same identity at once, another only once the lease has run', () => {
  now = 0;
  const t = table();
  t.claim('s', holder('a'));
  const gone = holder('a');
  t.claim('t', gone);
  t.release(gone);
  assert.is(t.ownerOf('t'), 'adapter', 'held for the lease');
  now = 999;
  const early = t.claim('t', holder('b'));
  assert.match(!early.ok ? early.detail : '', 'lapses in 1 s');
  assert.ok(t.claim('t', holder('a')).ok, 'the adapter restarting takes it back');
  now = 5000;
  const back = holder('a');
  t.claim('u', back);
  t.release(back);
  now = 6001;
  assert.is(t.ownerOf('u'), undefined, 'lapsed and forgotten');
  assert.ok(t.claim('u', holder('b')).ok);
});

test('one-user parties (the shared token) may hold one session on several connections', () => {
  now = 0;
  const t = table();
  const one = holder('shared');
  const two = holder('shared');
  assert.ok(t.claim('s', one).ok);
  assert.ok(t.claim('s', two).ok, 'routing answers this ambiguous, as AEP says');
  assert.is(t.claim('s', holder('a')).ok, false, 'a bound identity is still kept out');
  t.release(one);
  assert.ok(t.holds('s', two));
});

test.run();
