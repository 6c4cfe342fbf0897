import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  accessPolicy,
  bearerToken,
  ceilingFor,
  globMatch,
  loadTokensFile,
  mayClaimGrant,
  mayCommand,
  mayEmit,
  parseTokensFile,
} from '../../src/relay/acl.js';
import { SteeringError } from '../../src/protocol/errors.js';

test('no token configured: everyone is anonymous and watch-only (AEP-0004 §4.1)', () => {
  const p = accessPolicy({});
  assert.is(p.required, false);
  const who = p.authenticate(undefined)!;
  assert.ok(who);
  assert.is(mayCommand(who, 'control.pause', 's1').ok, false);
});

test('shared token: the right token gets full control rights, a wrong or missing one nothing', () => {
  const p = accessPolicy({ token: 'sekrit' });
  assert.is(p.required, true);
  assert.is(p.authenticate(undefined), undefined);
  assert.is(p.authenticate('sekri'), undefined);
  assert.is(p.authenticate('sekrit-and-more'), undefined);
  const who = p.authenticate('sekrit')!;
  assert.ok(mayCommand(who, 'x.codex.control.instruct', 'any-session').ok);
});

test('D39: a tokens file with no entries refuses every token and never falls back to anonymous', () => {
  const p = accessPolicy({ entries: [], fromFile: true });
  assert.is(p.required, true);
  assert.is(p.authenticate(undefined), undefined);
  assert.is(p.authenticate('anything'), undefined);
  // The shared token still works beside an empty file.
  assert.ok(accessPolicy({ token: 'sekrit', entries: [], fromFile: true }).authenticate('sekrit'));
});

test('D18 tokens file: identities, command globs and session globs', () => {
  const digest = createHash('sha256').update('viewer-token').digest('hex');
  const entries = parseTokensFile(
    JSON.stringify({
      tokens: [
        { token: 'alice-token', identity: 'alice', commands: ['x.*.control.instruct'], sessions: ['proj-*'] },
        { sha256: digest, identity: 'viewer' },
      ],
    }),
  );
  const p = accessPolicy({ entries });
  const alice = p.authenticate('alice-token')!;
  assert.is(alice.identity, 'alice');
  assert.ok(mayCommand(alice, 'x.claude-code.control.instruct', 'proj-1').ok);
  const wrongType = mayCommand(alice, 'control.cancel', 'proj-1');
  assert.is(wrongType.ok, false);
  assert.match((wrongType as { detail: string }).detail, /alice may not send control\.cancel/);
  const wrongSession = mayCommand(alice, 'x.codex.control.instruct', 'other');
  assert.is(wrongSession.ok, false);
  assert.match((wrongSession as { detail: string }).detail, /session other/);
  const viewer = p.authenticate('viewer-token')!;
  assert.is(viewer.identity, 'viewer');
  const v = mayCommand(viewer, 'control.pause', 'proj-1');
  assert.is(v.ok, false);
  assert.match((v as { detail: string }).detail, /watch-only/);
  // D44: a watch-only token cannot pause a queue, nor change what waits.
  for (const verb of ['hold', 'edit', 'move', 'promote']) {
    const q = mayCommand(viewer, `x.claude-code.control.${verb}`, 'proj-1');
    assert.match(q.ok ? '' : q.detail, /watch-only/, verb);
  }
});

test('tokens file errors name the entry and never open the relay', () => {
  const bad = [
    'not json',
    '{"tokens": {}}',
    '{"tokens": [{"identity": "x"}]}',
    `{"tokens": [{"token": "a", "sha256": "${'a'.repeat(64)}", "identity": "x"}]}`,
    '{"tokens": [{"token": "a"}]}',
    '{"tokens": [{"token": "a", "identity": "x", "commands": "control.*"}]}',
    '{"tokens": [{"sha256": "XYZ", "identity": "x"}]}',
  ];
  for (const text of bad) {
    try {
      parseTokensFile(text, 'f.json');
      assert.unreachable(`accepted: ${text}`);
    } catch (err) {
      assert.instance(err, SteeringError);
      assert.is((err as SteeringError).code, 'CONFIG_INVALID');
      assert.match((err as Error).message, /^f\.json/);
    }
  }
});

test('D32 withdraw grants: session globs from the tokens file, claimed only on a withdraw', () => {
  const [lead, plain] = parseTokensFile(
    JSON.stringify({
      tokens: [
        { token: 'lead', identity: 'lead', commands: ['x.*.control.withdraw'], withdraw: ['team-*'] },
        { token: 'plain', identity: 'plain', commands: ['*'] },
      ],
    }),
  );
  const policy = accessPolicy({ entries: [lead!, plain!] });
  const l = policy.authenticate('lead')!;
  const p = policy.authenticate('plain')!;
  const W = 'x.claude-code.control.withdraw';
  assert.equal(mayClaimGrant(l, W, 'team-7', 'withdraw'), { ok: true });
  assert.equal(mayClaimGrant(l, W, 'solo-1', 'withdraw'), {
    ok: false,
    detail: 'lead is not granted withdraw for session solo-1',
  });
  assert.equal(mayClaimGrant(p, W, 'team-7', 'withdraw'), {
    ok: false,
    detail: 'plain is not granted withdraw for session team-7',
  });
  assert.equal(mayClaimGrant(p, W, 'team-7', undefined), { ok: true }, 'no claim: only the sender rule applies');
  assert.not.ok(mayClaimGrant(l, 'x.claude-code.control.instruct', 'team-7', 'withdraw').ok);
  // D44: the queue verbs on one instruction carry withdraw's right; a hold names no instruction.
  for (const v of ['edit', 'move', 'promote'])
    assert.ok(mayClaimGrant(l, `x.claude-code.control.${v}`, 'team-7', 'withdraw').ok, v);
  assert.not.ok(mayClaimGrant(l, 'x.claude-code.control.hold', 'team-7', 'withdraw').ok);
  assert.not.ok(mayClaimGrant(l, W, 'team-7', 'everything').ok);
  assert.ok(
    mayClaimGrant(accessPolicy({ token: 'shared' }).authenticate('shared')!, W, 'any', 'withdraw').ok,
    'the shared token serves one user',
  );
  try {
    parseTokensFile('{"tokens": [{"token": "a", "identity": "x", "withdraw": "*"}]}', 'f.json');
    assert.unreachable('a withdraw that is not a list of globs was accepted');
  } catch (err) {
    assert.is((err as SteeringError).code, 'CONFIG_INVALID');
    assert.match((err as Error).message, 'f.json: tokens[0].withdraw must be an array of non-empty strings');
  }
});

test('loadTokensFile reads a real file; a missing file is CONFIG_INVALID', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acl-'));
  const f = join(dir, 'tokens.json');
  writeFileSync(f, JSON.stringify({ tokens: [{ token: 't', identity: 'ops', commands: ['control.*'] }] }), {
    mode: 0o600,
  });
  const entries = loadTokensFile(f);
  assert.equal(entries, [{ token: 't', identity: 'ops', commands: ['control.*'] }]);
  assert.throws(
    () => loadTokensFile(join(dir, 'missing.json')),
    (e: unknown) => (e as SteeringError).code === 'CONFIG_INVALID',
  );
});

test('globMatch: * spans any characters, everything else literal', () => {
  assert.ok(globMatch('x.*.control.instruct', 'x.claude-code.control.instruct'));
  assert.not.ok(globMatch('x.*.control.instruct', 'x.codex.control.send_input'));
  assert.ok(globMatch('*', 'anything.at.all'));
  assert.not.ok(globMatch('control.pause', 'controlXpause'));
  assert.ok(globMatch('s(1)', 's(1)'));
});

test('bearerToken: header first, access_token query as the fallback', () => {
  assert.is(bearerToken('Bearer abc', new URLSearchParams('access_token=zzz')), 'abc');
  assert.is(bearerToken(undefined, new URLSearchParams('access_token=zzz')), 'zzz');
  assert.is(bearerToken('Basic abc', new URLSearchParams()), undefined);
});

test('D19/D20 tokens file: emit rights as globs or {agents, sessions}, capture ceilings, watch-only at metadata', () => {
  const entries = parseTokensFile(
    JSON.stringify({
      tokens: [
        { token: 'ad', identity: 'adapter', emit: ['claude-code', 'codex'] },
        { token: 'sc', identity: 'scoped', emit: { agents: ['codex'], sessions: ['ci-*'] } },
        { token: 'op', identity: 'alice', commands: ['x.*.control.instruct'] },
        { token: 'w', identity: 'viewer' },
        { token: 'au', identity: 'auditor', capture: 'redacted' },
      ],
    }),
  );
  const p = accessPolicy({ entries });
  const [adapter, scoped, alice, viewer, auditor] = ['ad', 'sc', 'op', 'w', 'au'].map((t) => p.authenticate(t)!);
  assert.ok(mayEmit(adapter!, 'codex', 's1').ok);
  assert.match(
    (mayEmit(adapter!, 'qwen-code', 's1') as { detail: string }).detail,
    'adapter may not publish events of qwen-code for session s1',
  );
  assert.ok(mayEmit(scoped!, 'codex', 'ci-7').ok);
  assert.is(mayEmit(scoped!, 'codex', 'laptop').ok, false);
  assert.match(
    (mayEmit(viewer!, 'codex', undefined) as { detail: string }).detail,
    'viewer may not publish events (no emit rights)',
  );
  assert.is(ceilingFor(viewer!, undefined), 'metadata');
  assert.is(ceilingFor(viewer!, 'full'), 'metadata');
  assert.is(ceilingFor(viewer!, 'none'), 'none');
  assert.is(ceilingFor(auditor!, 'full'), 'redacted');
  assert.is(ceilingFor(alice!, undefined), undefined, 'a steering identity sees what it sent');
  assert.is(ceilingFor(adapter!, undefined), undefined);
  // D19: the sender is the authenticated identity; the shared token is not bound.
  assert.ok(mayCommand(alice!, 'x.codex.control.instruct', 's', 'alice').ok);
  assert.match(
    (mayCommand(alice!, 'x.codex.control.instruct', 's', 'admin') as { detail: string }).detail,
    'names "admin" as its sender',
  );
  assert.ok(mayCommand(accessPolicy({ token: 't' }).authenticate('t')!, 'control.pause', 's', 'anyone').ok);
  for (const bad of [
    { emit: 'codex' },
    { emit: [{ sessions: ['*'] }] },
    { emit: [{ agents: [] }] },
    { capture: 'everything' },
  ]) {
    assert.throws(
      () => parseTokensFile(JSON.stringify({ tokens: [{ token: 'x', identity: 'x', ...bad }] })),
      /tokens\[0\]\.(emit|capture)/,
    );
  }
});

test.run();
