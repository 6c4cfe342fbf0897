import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { homedir } from 'node:os';
import fc from 'fast-check';
import { PII, SECRET, redactText, redactValue } from '../../src/protocol/redact.js';

const r = (s: string, opts = {}): string => redactText(s, { home: '/nonexistent-home', ...opts });

test('(a) secrets: key=value keeps the key, credential counts stay', () => {
  assert.is(r('export GITHUB_TOKEN=abc123def'), `export GITHUB_TOKEN=${SECRET}`);
  assert.is(r('db password: hunter2 ok'), `db password: ${SECRET} ok`);
  assert.is(r('max_tokens=4000 and tokens: 12'), 'max_tokens=4000 and tokens: 12');
  // A value runs to the next space or quote: a password with `&` in it must not leak its tail.
  assert.is(r('?access_token=xyz&x=1 next'), `?access_token=${SECRET} next`);
});

test('(a) secrets: bearer tokens in any case, prose untouched', () => {
  assert.is(r('Authorization: Bearer eyabc.def-123'), `Authorization: Bearer ${SECRET}`);
  assert.is(r('BEARER Zm9vYmFyYmF6cXV4MTIz'), `BEARER ${SECRET}`);
  assert.is(r('a bearer bond and the bearer of news'), 'a bearer bond and the bearer of news');
  assert.is(r('Authorization: Basic dXNlcjpwYXNz'), `Authorization: Basic ${SECRET}`);
});

test('(a) secrets: an unterminated PEM block is redacted to the end', () => {
  const out = r('key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg');
  assert.not.ok(out.includes('MIIEvQIBADANBg'));
  assert.ok(out.startsWith('key:'));
});

test('(b) operator secret names and values', () => {
  assert.is(r('DEPLOY_PHRASE=open-sesame now', { secretNames: ['DEPLOY_PHRASE'] }), `DEPLOY_PHRASE=${SECRET} now`);
  assert.is(r('use abcdef and abc', { secretValues: ['abc', 'abcdef', ''] }), `use ${SECRET} and ${SECRET}`);
});

test('(c) home prefix: the operator home by default, any user home as hardening', () => {
  const home = homedir();
  if (home && home !== '/') assert.is(redactText(`${home}/project/a.ts`), '~/project/a.ts');
  assert.is(r('/home/operatorX/file', { home: '/home/operator' }), '~/file', 'a longer name is still some user home');
  assert.is(r('cd /home/operator', { home: '/home/operator' }), 'cd ~');
  assert.is(r('C:\\Users\\bob\\notes.txt'), '~\\notes.txt');
  assert.is(r('/var/homework/x'), '/var/homework/x');
});

test('(d) PII on by default, operator-disableable; dates, versions and ids are not phones', () => {
  assert.is(r('mail ops@example.com'), `mail ${PII}`);
  assert.is(r('call 555-123-4567'), `call ${PII}`);
  assert.is(r('mail ops@example.com', { pii: false }), 'mail ops@example.com');
  for (const s of [
    'on 2026-07-03 at 10:00',
    'node 22.11.0',
    'pid 1234567',
    'port 8377',
    'ip 10.0.0.1',
    'ulid 01JX9YB0AAAA0000000000GOLD',
  ])
    assert.is(r(s), s);
});

test('redactValue: credential keys replaced whole, strings scanned, other values untouched, input not mutated', () => {
  const input = {
    Authorization: 'Basic x',
    nested: { client_secret: { a: 1 }, list: ['ok', 'AKIAIOSFODNN7EXAMPLE'] },
    'gen_ai.usage.input_tokens': 12,
    token_count: 3,
    n: null,
    flag: false,
  };
  const before = JSON.stringify(input);
  const out = redactValue(input, { home: '/nonexistent-home' });
  assert.equal(out, {
    Authorization: SECRET,
    nested: { client_secret: SECRET, list: ['ok', SECRET] },
    'gen_ai.usage.input_tokens': 12,
    token_count: 3,
    n: null,
    flag: false,
  });
  assert.is(JSON.stringify(input), before);
  assert.is(redactValue('password=1', {}), `password=${SECRET}`);
  assert.is(redactValue(7), 7);
});

const PIECES = [
  'token=abc123',
  'Bearer xyz789abc',
  'AKIAIOSFODNN7EXAMPLE',
  'mail a@b.co',
  '/home/al/x',
  '555-123-4567',
  'password: p@ss',
  '"api_key": "k1"',
  'the bearer',
  'bearer',
  '22.11.0',
  'eyJa.eyJb.c',
  'sk-abcdefghijklmnop1234',
  '-----BEGIN X-----\nA\n-----END X-----',
  'ok',
  ':',
  '=',
];
const LEAKS = ['AKIAIOSFODNN7EXAMPLE', 'xyz789abc', 'sk-abcdefghijklmnop1234', 'a@b.co', 'abc123', 'p@ss', '/home/al'];

test('property: text built from secrets and prose never leaks, and redacting twice changes nothing', () => {
  const text = fc
    .array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom(' ', '\n', ', ', '; ')), { maxLength: 12 })
    .map((a) => a.flat().join(''));
  fc.assert(
    fc.property(text, (s) => {
      const once = r(s);
      for (const leak of LEAKS)
        assert.not.ok(once.includes(leak), `${JSON.stringify(s)} leaked ${leak}: ${JSON.stringify(once)}`);
      assert.is(r(once), once);
    }),
    { numRuns: 1000 },
  );
});

test.run();
