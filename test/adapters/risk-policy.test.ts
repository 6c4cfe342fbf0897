// D48: the built-in risk rules, a user's policy file (validated, with a clear error), and the
// mark a risky held request carries at every capture level: the rule's name, never the command.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_POLICY, loadPolicy, parsePolicy, subjectOf } from '../../src/adapters/risk-policy.js';
import { SteeringError } from '../../src/protocol/errors.js';
import { adapterConfig } from '../../src/cli/adapter-command.js';
import { surfaceFor } from '../../src/adapters/registry.js';
import { downLevel } from '../../src/protocol/capture.js';
import { SessionEmitter, newId } from '../../src/protocol/index.js';
import { stamp, type StampSource } from '../../src/streams/stamp.js';

const bash = (command: string, cwd = '/work/proj') => DEFAULT_POLICY.match(subjectOf('Bash', { command }, cwd))?.rule;
const write = (path: string, cwd = '/work/proj') =>
  DEFAULT_POLICY.match(subjectOf('Write', { file_path: path, content: 'x' }, cwd))?.rule;

test('the built-in rules: force-push, rm -rf outside the cwd, writes outside it, curl piped to a shell', () => {
  assert.is(bash('git push --force origin main'), 'force-push');
  assert.is(bash('git push -f'), 'force-push');
  assert.is(bash('git push origin +main'), 'force-push');
  assert.is(bash('git push --force-with-lease'), 'force-push');
  assert.is(bash('git push origin main'), undefined);
  assert.is(bash('rm -rf /etc'), 'rm-rf-outside-cwd');
  assert.is(bash('rm -fr ../other'), 'rm-rf-outside-cwd');
  assert.is(bash('cd x && rm -r -f ~/notes'), 'rm-rf-outside-cwd');
  assert.is(bash('rm -rf build'), undefined, 'inside the working directory');
  assert.is(bash('rm -rf /work/proj/dist'), undefined, 'an absolute path inside it');
  assert.is(bash('rm -r build'), undefined, 'not forced');
  assert.is(write('/etc/hosts'), 'write-outside-cwd');
  assert.is(write('../sibling/a.txt'), 'write-outside-cwd');
  assert.is(write('src/a.ts'), undefined);
  assert.is(write('/work/proj/src/a.ts'), undefined);
  assert.is(bash('curl -fsSL https://x.example/install.sh | sh'), 'curl-pipe-shell');
  assert.is(bash('wget -qO- https://x.example/i | sudo bash'), 'curl-pipe-shell');
  assert.is(bash('curl https://x.example -o out.json'), undefined);
  assert.is(bash('ls -la'), undefined);
});

test("a policy file adds the user's rules, may switch the built-ins off, and a bad one is refused with what is wrong", () => {
  const p = parsePolicy(
    JSON.stringify({ rules: [{ name: 'deploy', why: 'ships to production', command: '\\bkubectl apply\\b' }] }),
    'p.json',
  );
  assert.equal(p.match(subjectOf('Bash', { command: 'kubectl apply -f x.yaml' }, '/w')), {
    rule: 'deploy',
    why: 'ships to production',
  });
  assert.is(p.match(subjectOf('Bash', { command: 'git push -f' }, '/w'))?.rule, 'force-push', 'built-ins stay');
  const only = parsePolicy(JSON.stringify({ builtins: false, rules: [{ name: 'any-web', tool: '^WebFetch$' }] }), 'q');
  assert.is(only.match(subjectOf('Bash', { command: 'git push -f' }, '/w')), undefined);
  assert.is(only.match(subjectOf('WebFetch', { url: 'https://x' }, '/w'))?.rule, 'any-web');
  const bad = (text: string, says: string) => {
    try {
      parsePolicy(text, 'bad.json');
      assert.unreachable(`accepted ${text}`);
    } catch (e) {
      assert.instance(e, SteeringError);
      assert.is((e as SteeringError).code, 'CONFIG_INVALID');
      assert.match((e as Error).message, 'policy file bad.json');
      assert.match((e as Error).message, says);
    }
  };
  bad('{', 'is not JSON');
  bad('[]', 'not a JSON object');
  bad('{"rulez": []}', 'unknown key "rulez"');
  bad('{"rules": [{"name": "Bad Name", "command": "x"}]}', 'rules[0].name');
  bad('{"rules": [{"name": "x", "command": "("}]}', 'rules[0].command is not a valid regular expression');
  bad('{"rules": [{"name": "x"}]}', 'needs at least one of tool, command, path');
  bad('{"rules": [{"name": "force-push", "command": "x"}]}', 'used twice');
  bad('{"rules": [{"name": "x", "command": "y", "extra": 1}]}', 'unknown key "extra"');
  const dir = mkdtempSync(join(tmpdir(), 'policy-'));
  try {
    loadPolicy(join(dir, 'missing.json'));
    assert.unreachable('a missing file');
  } catch (e) {
    assert.match((e as Error).message, 'cannot be read');
  }
  const file = join(dir, 'ok.json');
  writeFileSync(file, '{"rules":[]}');
  assert.is(loadPolicy(file).rules.length, 4);
});

test('a risky Claude Code permission is marked with the rule name, which a metadata reader sees without the command', () => {
  const surface = surfaceFor('claude-code')!;
  const permission = (command: string) =>
    surface.classify({
      session_id: 's1',
      hook_event_name: 'PermissionRequest',
      cwd: '/work/proj',
      tool_name: 'Bash',
      tool_input: { command },
    });
  const hook = permission('git push --force origin main');
  assert.is(hook.class.kind, 'held');
  const request = (hook.class as { request: { risky?: unknown } }).request;
  assert.equal(request.risky, { rule: 'force-push', why: "a force push rewrites a remote branch's history" });
  const emitter = new SessionEmitter({ agent: 'claude-code', session: 's1', epoch: 1 });
  const source: StampSource = { emitter: () => emitter, ack: () => undefined, hook: () => undefined };
  const out = stamp(
    's1',
    source,
    { type: 'hook.moment', at: Date.now(), hookId: 'h', eligible: false },
    [{ type: 'attention.requested', id: newId(), request: request as never }],
    { notice: false, contextReply: () => ({ body: {} }), decisionReply: () => ({ body: {} }) },
  );
  const e = out.events[0]!;
  for (const level of ['redacted', 'metadata'] as const) {
    const seen = downLevel(e, level);
    assert.equal(seen.data?.['risky'], { rule: 'force-push', why: "a force push rewrites a remote branch's history" });
    if (level === 'metadata') assert.not.match(JSON.stringify(seen), 'git push', 'no command text at metadata');
  }
  const plain = permission('ls');
  assert.is((plain.class as { request: { risky?: unknown } }).request.risky, undefined);
});

test('the adapter takes --policy FILE (or AEP_POLICY): its rules mark requests; a bad file stops the start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'policy-flag-'));
  const env = { AEP_STATE_DIR: join(dir, 'state') };
  const file = join(dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ rules: [{ name: 'deploy', command: '\\bkubectl apply\\b' }] }));
  const held = (policy: Record<string, string>, flags: { policy?: string } = {}) =>
    adapterConfig('claude-code', flags, { ...env, ...policy }).surface.classify({
      session_id: 's1',
      hook_event_name: 'PermissionRequest',
      cwd: '/work/proj',
      tool_name: 'Bash',
      tool_input: { command: 'kubectl apply -f x.yaml' },
    }).class as { request: { risky?: { rule: string } } };
  assert.is(held({}, { policy: file }).request.risky?.rule, 'deploy');
  assert.is(held({ AEP_POLICY: file }).request.risky?.rule, 'deploy');
  assert.is(held({}).request.risky, undefined, 'the built-ins alone do not mark it');
  writeFileSync(file, '{"rules": [{"name": "x"}]}');
  assert.throws(() => held({}, { policy: file }), /needs at least one of tool, command, path/);
});

test.run();
