// Answer links on their own: unguessable, single use, one use spends the request's other links,
// an ended request's links say how it ended, and the bound expires them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerLinks, endedBecause } from '../../src/notify/answer-links.js';
import type { AepEvent } from '../../src/protocol/envelope.js';

const ev = (type: string, data: Record<string, unknown>, agent = 'claude-code'): AepEvent =>
  ({
    aep: '0.1',
    id: 'e1',
    time: new Date().toISOString(),
    source: 's',
    agent,
    type,
    subject: 'req-1',
    data,
  }) as AepEvent;

test('tokens are 24 characters of base64url (144 bits), distinct per answer and per request', () => {
  const links = new AnswerLinks();
  const a = links.mint('s1', 'req-1', ['allow', 'deny']);
  const b = links.mint('s1', 'req-2', ['allow', 'deny']);
  for (const t of [...Object.values(a), ...Object.values(b)]) assert.match(t, /^[A-Za-z0-9_-]{24}$/);
  assert.is(new Set([...Object.values(a), ...Object.values(b)]).size, 4);
  assert.equal(links.mint('s1', 'req-1', ['allow']), {}, 'a request gets its links once');
});

test('one use: the link answers once, its sibling is spent too, and a later tap says why', () => {
  const links = new AnswerLinks();
  const { allow, deny } = links.mint('s1', 'req-1', ['allow', 'deny']);
  assert.equal(links.peek(allow!), {
    ok: true,
    link: {
      token: allow!,
      session: 's1',
      request: 'req-1',
      option: 'allow',
      expiresAt: (links.peek(allow!) as { link: { expiresAt: number } }).link.expiresAt,
    },
  });
  const first = links.take(allow!);
  assert.ok(first.ok && first.link.option === 'allow' && first.link.request === 'req-1');
  for (const t of [allow!, deny!]) {
    const again = links.take(t);
    assert.ok(!again.ok && again.reason === 'used' && again.status === 409);
  }
  // The request then ends: a spent link keeps saying it was used.
  links.ended('req-1', 'already answered');
  assert.is((links.take(deny!) as { reason: string }).reason, 'used');
});

test('an ended request: its links refuse with how it ended', () => {
  const links = new AnswerLinks();
  const { allow } = links.mint('s1', 'req-1', ['allow', 'deny']);
  links.ended('req-1', endedBecause(ev('attention.answered', { answer: { option: 'allow' }, via: 'oob' }))!);
  const r = links.take(allow!);
  assert.ok(!r.ok && r.reason === 'ended');
  assert.match((r as { message: string }).message, 'already answered at the agent; nothing was recorded');
  assert.equal(links.mint('s1', 'req-9', []), {});
  links.ended('req-3', 'timed out at the agent');
  assert.equal(links.mint('s1', 'req-3', ['allow']), {}, 'no links for a request that already ended');
});

test('how a request ended, in words', () => {
  assert.is(endedBecause(ev('attention.answered', { via: 'oob' })), 'already answered at the agent');
  assert.is(
    endedBecause(ev('attention.answered', { via: 'control' }, 'ops-cli')),
    'already answered through the relay (by ops-cli)',
  );
  assert.match(endedBecause(ev('attention.resolved', { resolution: 'dismissed' }))!, 'dismissed at the agent');
  assert.is(endedBecause(ev('attention.timeout', { after_ms: 5 })), 'timed out at the agent');
  assert.is(endedBecause(ev('tool.started', {})), undefined);
});

test('links expire after the bound; unknown and malformed tokens are refused without a look-up', () => {
  let now = 1_000_000;
  const links = new AnswerLinks(60_000, () => now);
  const { allow } = links.mint('s1', 'req-1', ['allow']);
  now += 60_001;
  const r = links.take(allow!);
  assert.ok(!r.ok && r.reason === 'expired' && r.status === 410);
  assert.is((links.take('A'.repeat(24)) as { reason: string }).reason, 'unknown');
  assert.is((links.take('../etc/passwd') as { reason: string }).reason, 'unknown');
  // Long after, the spent link is forgotten, so the set stays bounded.
  now += 10 * 60_000;
  links.mint('s1', 'req-2', ['allow']);
  assert.is((links.take(allow!) as { reason: string }).reason, 'unknown');
});

test.run();
