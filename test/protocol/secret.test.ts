// Secrets are URL-safe, long enough, distinct, and pass the hook-secret check as they are.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newSecret } from '../../src/protocol/secret.js';
import { checkSecret } from '../../src/adapters/install.js';

test('a new secret is 32 base64url characters, accepted by the hook-secret check, never repeated', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i += 1) {
    const s = newSecret();
    assert.match(s, /^[A-Za-z0-9_-]{32}$/);
    assert.is(checkSecret(s), s);
    assert.not.ok(seen.has(s));
    seen.add(s);
  }
  assert.match(newSecret(24), /^[A-Za-z0-9_-]{24}$/);
  // Every character of the alphabet turns up: the draw is not narrowed to a subset.
  const chars = new Set([...Array.from({ length: 200 }, () => newSecret()).join('')]);
  assert.ok(chars.size >= 60, `alphabet coverage ${chars.size}`);
});

test.run();
