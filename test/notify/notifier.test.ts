// The notifier fed events directly (as the console's subscription feeds it), posting to a
// loopback server standing in for ntfy and a webhook: each target's capture ceiling decides what
// of a request leaves the machine, a failed post is retried, and an adapter going offline is told
// to the targets that asked.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerLinks } from '../../src/notify/answer-links.js';
import { Notifier } from '../../src/notify/notifier.js';
import { parseTarget } from '../../src/notify/targets.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { startPushServer, type PushServer } from '../support/push-server.js';

let push: PushServer;
test.before(async () => {
  push = await startPushServer();
});
test.after(async () => {
  await push.close();
});

const COMMAND = 'rm -rf build/';
const event = (type: string, fields: Partial<AepEvent>): AepEvent =>
  ({
    aep: '0.1',
    id: `${type}-${Math.random()}`,
    time: new Date().toISOString(),
    source: 'test',
    agent: 'claude-code',
    session: 'sess-1',
    type,
    ...fields,
  }) as AepEvent;

function notifier(targets: string[], warn: string[] = [], armed = true): Notifier {
  const n = new Notifier({
    targets: targets.map(parseTarget),
    links: new AnswerLinks(),
    consoleUrl: (s, r) => `https://console.example/secret/#session=${s}&request=${r ?? ''}`,
    answerUrl: (t) => `https://console.example/answer/${t}`,
    queued: () => 0,
    warn: (m) => warn.push(m),
    graceMs: 10,
    retry: { attempts: 3, firstWaitMs: 20, timeoutMs: 1000 },
  });
  if (armed) n.arm();
  return n;
}

test('each target gets the request at its own ceiling: the command and cwd only where redacted is allowed', async () => {
  const n = notifier([
    `ntfy:${push.url}/t1`,
    `webhook:${push.url}/meta`,
    `webhook:${push.url}/red#capture=redacted`,
    `webhook:${push.url}/none#capture=none`,
  ]);
  n.observe(event('session.started', { capture: 'redacted', data: { cwd: '/home/dev/secret-project' } }));
  // As a request carrying what it asks at redacted looks (D35): the command in the prompt.
  const req = event('attention.requested', {
    subject: 'Bash',
    capture: 'redacted',
    data: {
      kind: 'permission',
      prompt: `Bash: ${COMMAND}`,
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    },
  });
  n.observe(req);
  const ntfy = await push.next((p) => p.path === '/');
  const meta = await push.next((p) => p.path === '/meta');
  const red = await push.next((p) => p.path === '/red');
  const none = await push.next((p) => p.path === '/none');
  for (const p of [ntfy, meta, none]) {
    assert.not.match(JSON.stringify(p.body), COMMAND);
    assert.not.match(JSON.stringify(p.body), 'secret-project');
  }
  assert.is(ntfy.body['message'], 'claude-code requests permission: Bash', 'the structural prompt: the tool name');
  assert.equal((meta.body['request'] as Record<string, unknown>)['asks'], 'claude-code requests permission: Bash');
  assert.equal((red.body['request'] as Record<string, unknown>)['asks'], `Bash: ${COMMAND}`);
  assert.is(red.body['cwd'], '/home/dev/secret-project');
  assert.is(meta.body['cwd'], undefined);
  assert.equal(none.body['request'], { id: req.id }, 'at none: that a request waits, nothing of it');
  assert.is(none.body['message'], 'claude-code asks about Bash');
  // One set of answer links, shared by every target.
  assert.equal(Object.keys(meta.body['answers'] as object), ['allow', 'deny']);
  assert.equal(meta.body['answers'], red.body['answers']);
  await n.close();
});

test('a push is sent once per request, and a failed post is retried until it gets through', async () => {
  const warn: string[] = [];
  const n = notifier([`webhook:${push.url}/retry`], warn);
  push.failures = 2;
  const req = event('attention.requested', {
    data: { kind: 'permission', prompt: 'claude-code requests permission: Bash' },
  });
  n.observe(req);
  n.observe(req);
  await push.next((p) => p.path === '/retry');
  await new Promise((r) => setTimeout(r, 150));
  assert.is(push.received.filter((p) => p.path === '/retry').length, 1);
  assert.equal(warn, []);
  await n.close();
});

test('history replayed at start is not pushed; a request ended within the grace is not pushed', async () => {
  const n = notifier([`webhook:${push.url}/history`], [], false);
  n.observe(event('attention.requested', { data: { kind: 'permission' } }));
  n.observe(event('x.claude-code.instruction.dropped', { data: { reason: 'expired' } }));
  n.arm();
  const quick = event('attention.requested', { data: { kind: 'permission' } });
  n.observe(quick);
  n.observe(event('attention.answered', { subject: quick.id, data: { answer: { option: 'allow' }, via: 'oob' } }));
  await new Promise((r) => setTimeout(r, 150));
  assert.is(push.received.filter((p) => p.path === '/history').length, 0);
  await n.close();
});

test('an adapter going offline is told to the targets that opted in, once per going', async () => {
  const n = notifier([`webhook:${push.url}/offline#on=offline`, `webhook:${push.url}/quiet`]);
  n.liveness([{ session: 'sess-2', claimants: 1, state: 'idle', agent: 'codex' }]);
  n.liveness([{ session: 'sess-2', claimants: 0, state: 'idle', agent: 'codex' }]);
  n.liveness([{ session: 'sess-2', claimants: 0, state: 'idle', agent: 'codex' }]);
  const p = await push.next((x) => x.path === '/offline');
  assert.is(p.body['kind'], 'offline');
  assert.is(p.body['session'], 'sess-2');
  assert.match(String(p.body['title']), 'codex: the adapter went offline');
  // An ended session losing its claimant is not offline.
  n.liveness([{ session: 'sess-3', claimants: 1, state: 'idle' }]);
  n.liveness([{ session: 'sess-3', claimants: 0, state: 'ended' }]);
  await new Promise((r) => setTimeout(r, 100));
  assert.is(push.received.filter((x) => x.path === '/offline').length, 1);
  assert.is(push.received.filter((x) => x.path === '/quiet').length, 0);
  await n.close();
});

test('ntfy credentials in the URL go as a Basic header to the server root', async () => {
  const n = notifier([`ntfy:${push.url.replace('http://', 'http://me:pa%24s@')}/base/topic-x`]);
  n.observe(event('attention.requested', { data: { kind: 'permission' } }));
  const p = await push.next((x) => x.body['topic'] === 'topic-x');
  assert.is(p.path, '/base/');
  assert.is(p.headers.authorization, `Basic ${Buffer.from('me:pa$s').toString('base64')}`);
  await n.close();
});

// D48: a risky request's push has no one-tap allow: Deny and Open (the console), and why.
test('a risky request is pushed with Deny and Open, no Allow, saying why and naming the rule, never the command', async () => {
  const n = notifier([`ntfy:${push.url}/risky`, `webhook:${push.url}/risky-hook`]);
  const rule = { rule: 'force-push', why: "a force push rewrites a remote branch's history" };
  const options = [
    { id: 'allow', label: 'Allow' },
    { id: 'deny', label: 'Deny' },
  ];
  const prompt = 'Bash: git push --force origin main';
  const data = { kind: 'permission', prompt, options, risky: rule };
  n.observe(event('attention.requested', { subject: 'Bash', capture: 'redacted', data }));
  const ntfy = await push.next((p) => p.path === '/' && p.body['topic'] === 'risky');
  const hook = await push.next((p) => p.path === '/risky-hook');
  const actions = ntfy.body['actions'] as { action: string; label: string; url: string }[];
  assert.equal(
    actions.map((a) => [a.action, a.label]),
    [
      ['http', 'Deny'],
      ['view', 'Open'],
    ],
  );
  assert.match(actions[1]!.url, 'https://console.example/secret/#session=sess-1');
  assert.match(String(ntfy.body['message']), 'Risky (force-push): an allow needs two approvers');
  assert.match(String(ntfy.body['title']), '(risky)');
  assert.not.match(JSON.stringify(ntfy.body), 'git push', 'at metadata: the rule, not the command');
  assert.equal(Object.keys(hook.body['answers'] as object), ['deny']);
  assert.is((hook.body['request'] as Record<string, unknown>)['risky'], 'force-push');
  // The same request without a rule keeps its one-tap Allow.
  n.observe(event('attention.requested', { subject: 'Bash', data: { kind: 'permission', options } }));
  const plain = await push.next((p) => p.path === '/' && p.body['topic'] === 'risky' && p !== ntfy);
  assert.equal(
    (plain.body['actions'] as { label: string }[]).map((a) => a.label),
    ['Allow', 'Deny'],
  );
  await n.close();
});

test.run();
