// D48 in a push: a risky request's notice has no one-tap allow. It offers Deny and Open (the
// console), says why, and names the rule (never the command) at every target's ceiling.
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

const COMMAND = 'git push --force origin main';
const request = (risky: boolean): AepEvent =>
  ({
    aep: '0.1',
    id: `req-${Math.random()}`,
    time: new Date().toISOString(),
    source: 'test',
    agent: 'claude-code',
    session: 'sess-1',
    type: 'attention.requested',
    subject: 'Bash',
    capture: 'redacted',
    data: {
      kind: 'permission',
      prompt: `Bash: ${COMMAND}`,
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
      ...(risky ? { risky: { rule: 'force-push', why: "a force push rewrites a remote branch's history" } } : {}),
    },
  }) as AepEvent;

function notifier(targets: string[]): Notifier {
  const n = new Notifier({
    targets: targets.map(parseTarget),
    links: new AnswerLinks(),
    consoleUrl: (s, r) => `https://console.example/#session=${s}&request=${r ?? ''}`,
    answerUrl: (t) => `https://console.example/answer/${t}`,
    queued: () => 0,
    warn: () => {},
    graceMs: 10,
    retry: { attempts: 2, firstWaitMs: 20, timeoutMs: 1000 },
  });
  n.arm();
  return n;
}

test('a risky request is pushed with Deny and Open, no Allow, and says why', async () => {
  const n = notifier([`ntfy:${push.url}/risky`, `webhook:${push.url}/hook`]);
  n.observe(request(true));
  const ntfy = await push.next((p) => p.path === '/' && p.body['topic'] === 'risky');
  const hook = await push.next((p) => p.path === '/hook');
  const actions = ntfy.body['actions'] as { action: string; label: string; url: string }[];
  assert.equal(
    actions.map((a) => [a.action, a.label]),
    [
      ['http', 'Deny'],
      ['view', 'Open'],
    ],
  );
  assert.match(actions[1]!.url, 'https://console.example/#session=sess-1');
  assert.match(String(ntfy.body['message']), 'Risky (force-push): an allow needs two approvers');
  assert.match(String(ntfy.body['title']), '(risky)');
  assert.not.match(JSON.stringify(ntfy.body), COMMAND, 'the ntfy target is metadata: the rule, not the command');
  assert.equal(Object.keys(hook.body['answers'] as object), ['deny']);
  assert.is((hook.body['request'] as Record<string, unknown>)['risky'], 'force-push');
  await n.close();
});

test('a request no rule marks keeps its one-tap Allow', async () => {
  const n = notifier([`ntfy:${push.url}/plain`]);
  n.observe(request(false));
  const ntfy = await push.next((p) => p.path === '/' && p.body['topic'] === 'plain');
  const labels = (ntfy.body['actions'] as { label: string }[]).map((a) => a.label);
  assert.equal(labels, ['Allow', 'Deny']);
  await n.close();
});

test.run();
