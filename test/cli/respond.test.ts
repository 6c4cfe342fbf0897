import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESPOND_EXIT, answerFrom, runRespond } from '../../src/cli/respond-command.js';
import { captureFor } from '../../src/consumer/respond.js';
import { SessionEmitter } from '../../src/protocol/index.js';
import { connectEmitter } from '../support/emitter-link.js';
import { heldPermission, sink, startTestStack, type TestStack } from './support.js';

let stack: TestStack;
test.before(async () => {
  stack = await startTestStack();
});
test.after(async () => {
  await stack.stop();
});

const flags = (session: string, request: string, extra: Record<string, unknown> = {}) => ({
  relay: stack.relayUrl,
  token: stack.token,
  sender: 'bob',
  session,
  request,
  timeout: '20000',
  ...extra,
});

test('answer words: allow/deny are options, anything else is text; --values is a form answer', () => {
  assert.equal(answerFrom('allow', undefined), { option: 'allow' });
  assert.equal(answerFrom('Deny', undefined), { option: 'deny' });
  assert.equal(answerFrom('use the staging db', undefined), { text: 'use the staging db' });
  assert.equal(answerFrom(undefined, '{"1":"2"}'), { values: { '1': '2' } });
  assert.ok('error' in answerFrom(undefined, undefined));
  assert.ok('error' in answerFrom('allow', '{}'));
  assert.ok('error' in answerFrom(undefined, '[1]'));
  assert.ok('error' in answerFrom(undefined, '{nope'));
  assert.is(captureFor({ option: 'allow' }), 'metadata');
  assert.is(captureFor({ text: 'x' }), 'redacted');
});

test('allow: accepted, answered, and the held hook reply carries the decision; exit 0', async () => {
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const out = sink();
  const code = await runRespond('allow', flags(s.session, request), { out: out.stream, err: sink().stream });
  assert.is(code, RESPOND_EXIT.answered, out.text());
  assert.match(out.text(), '✓ answered');
  const r = await reply;
  assert.equal(r.body, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  const cmd = stack.seen.find((e) => e.type === 'control.attention.respond' && e.subject === request)!;
  assert.is(cmd.cause, request);
  assert.is(cmd.capture, 'metadata');
});

test('free text on a permission is a deny carrying the text (D14)', async () => {
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const out = sink();
  const code = await runRespond('not on prod', flags(s.session, request, { json: true }), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(code, RESPOND_EXIT.answered);
  assert.is(JSON.parse(out.text()).outcome, 'answered');
  const r = await reply;
  assert.equal(r.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not on prod' } },
  });
});

test('an unknown request is rejected by the adapter: exit 3', async () => {
  const s = await stack.openSession();
  const out = sink();
  const code = await runRespond('allow', flags(s.session, '01NOSUCHREQUESTNOSUCHREQUE'), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(code, RESPOND_EXIT.rejected);
  assert.match(out.text(), 'rejected by the adapter');
});

test('refusals and usage: no live claimant exits 4; no answer exits 2; unreachable relay exits 7', async () => {
  const out = sink();
  assert.is(
    await runRespond('allow', flags('nobody-here', 'r1'), { out: out.stream, err: sink().stream }),
    RESPOND_EXIT.refused,
  );
  assert.match(out.text(), 'no-route');
  const err = sink();
  assert.is(await runRespond(undefined, flags('s', 'r1'), { out: sink().stream, err: err.stream }), RESPOND_EXIT.usage);
  assert.match(err.text(), 'give an answer');
  assert.is(
    await runRespond(
      'allow',
      { ...flags('s', 'r1'), relay: 'ws://127.0.0.1:1/socket' },
      { out: sink().stream, err: sink().stream },
    ),
    RESPOND_EXIT.unreachable,
  );
  const refused = sink();
  assert.is(
    await runRespond('allow', { ...flags('s', 'r1'), token: 'wrong' }, { out: refused.stream, err: sink().stream }),
    RESPOND_EXIT.unauthorized,
    'a refused token is exit 8, not 7',
  );
  assert.match(refused.text(), "pass the relay's token with --token or AEP_TOKEN");
});

test('a claimant that does not declare control.attention.respond: refused unsupported; a silent one: timeout', async () => {
  const silent = connectEmitter({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'quiet',
    accepts: ['control.attention.respond'],
  });
  const other = connectEmitter({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'narrow',
    accepts: ['control.cancel'],
  });
  await Promise.all([silent.ready(), other.ready()]);
  silent.send(new SessionEmitter({ agent: 'quiet', session: 'quiet-1', host: 'h' }).emit({ type: 'session.started' }));
  other.send(new SessionEmitter({ agent: 'narrow', session: 'narrow-1', host: 'h' }).emit({ type: 'session.started' }));
  await stack.waitFor((e) => e.session === 'quiet-1');
  await stack.waitFor((e) => e.session === 'narrow-1');
  const out = sink();
  assert.is(
    await runRespond('allow', flags('narrow-1', 'r1'), { out: out.stream, err: sink().stream }),
    RESPOND_EXIT.refused,
  );
  assert.match(out.text(), 'not sent (unsupported): narrow does not declare control.attention.respond; ');
  const t = sink();
  assert.is(
    await runRespond('deny', flags('quiet-1', 'r1', { timeout: '300', json: true }), {
      out: t.stream,
      err: sink().stream,
    }),
    RESPOND_EXIT.timeout,
  );
  assert.equal(JSON.parse(t.text()).stage, 'ack');
  await silent.close();
  await other.close();
});

test("a watch-only relay refuses the respond on the target's behalf: exit 4", async () => {
  const open = await startTestStack({ watchOnly: true });
  try {
    const s = await open.openSession();
    const out = sink();
    const code = await runRespond(
      'allow',
      { relay: open.relayUrl, sender: 'bob', session: s.session, request: 'r1', timeout: '20000' },
      { out: out.stream, err: sink().stream },
    );
    assert.is(code, RESPOND_EXIT.refused);
    assert.match(out.text(), 'the relay refused the command (unauthorized): ');
  } finally {
    await open.stop();
  }
});

test.run();
