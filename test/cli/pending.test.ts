// `aep-steer pending` and `respond` without --request against a real relay and adapter: held
// requests with their ids, what they ask (D35) and age; a request ended at the agent is gone from
// the list and a respond to it exits "not pending" (D34); a misfit answer has its own exit code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PENDING_EXIT, age, runPending } from '../../src/cli/pending-command.js';
import { RESPOND_EXIT, runRespond } from '../../src/cli/respond-command.js';
import { pendingOf } from '../../src/consumer/pending.js';
import { summarize } from '../../src/cli/watch-command.js';
import { downLevel } from '../../src/protocol/capture.js';
import { openHook } from '../support/open-hook.js';
import { permissionRequest, sink, startTestStack, type TestStack } from './support.js';

let stack: TestStack;
test.before(async () => {
  stack = await startTestStack();
});
test.after(async () => {
  await stack.stop();
});

const relay = () => ({ relay: stack.relayUrl, token: stack.token, sender: 'bob' });
const respondFlags = (session: string, extra: Record<string, unknown> = {}) => ({
  ...relay(),
  session,
  timeout: '20000',
  ...extra,
});

async function pendingJson(session?: string) {
  const out = sink();
  const code = await runPending({ ...relay(), json: true, ...(session ? { session } : {}) }, { out: out.stream });
  assert.is(code, PENDING_EXIT.listed, out.text());
  return JSON.parse(out.text()) as {
    outcome: string;
    requests: { request: string; session: string; kind: string; prompt?: string; options?: string[]; ageMs: number }[];
  };
}

test('pending lists held requests with id, session, kind, the command asked and age; respond --session answers the only one', async () => {
  const s = await stack.openSession();
  const reply = stack.postHook(permissionRequest(s));
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  const listed = await pendingJson(s.session);
  assert.is(listed.requests.length, 1);
  const r = listed.requests[0]!;
  assert.equal([r.request, r.session, r.kind, r.options], [requested.id, s.session, 'permission', ['allow', 'deny']]);
  assert.match(r.prompt!, 'Bash: touch new-file.txt');
  assert.ok(r.ageMs >= 0);
  const text = sink();
  await runPending({ ...relay() }, { out: text.stream });
  assert.match(text.text(), requested.id);
  assert.match(text.text(), 'touch new-file.txt');
  const out = sink();
  assert.is(
    await runRespond('allow', respondFlags(s.session), { out: out.stream, err: sink().stream }),
    RESPOND_EXIT.answered,
    out.text(),
  );
  assert.equal((await reply).body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  assert.equal((await pendingJson(s.session)).requests, [], 'answered: no longer pending');
});

test('several pending: respond without --request lists them and exits 2; none pending exits 5', async () => {
  const s = await stack.openSession();
  const one = openHook(stack.hookUrl, permissionRequest(s));
  const two = openHook(stack.hookUrl, {
    ...permissionRequest(s),
    tool_input: { command: 'rm -rf build/', description: 'clean' },
  });
  for (let i = 0; i < 100 && (await pendingJson(s.session)).requests.length < 2; i += 1)
    await new Promise((r) => setTimeout(r, 20));
  const err = sink();
  assert.is(
    await runRespond('deny', respondFlags(s.session), { out: sink().stream, err: err.stream }),
    RESPOND_EXIT.usage,
  );
  assert.match(err.text(), 'holds 2 requests: name one with --request');
  assert.match(err.text(), 'rm -rf build/');
  one.abort();
  two.abort();
  for (let i = 0; i < 100 && (await pendingJson(s.session)).requests.length > 0; i += 1)
    await new Promise((r) => setTimeout(r, 20));
  const none = sink();
  assert.is(
    await runRespond('deny', respondFlags(s.session), { out: sink().stream, err: none.stream }),
    RESPOND_EXIT.notPending,
  );
  assert.match(none.text(), 'no request is pending');
});

test('a request dismissed at the agent: gone from pending, and respond exits 5 "dismissed at the agent", nothing answered', async () => {
  const s = await stack.openSession();
  const held = openHook(stack.hookUrl, permissionRequest(s));
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  held.abort();
  await stack.waitFor((e) => e.type === 'attention.resolved' && e.subject === requested.id);
  assert.equal((await pendingJson(s.session)).requests, []);
  const out = sink();
  const code = await runRespond('allow', respondFlags(s.session, { request: requested.id }), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(code, RESPOND_EXIT.notPending, out.text());
  assert.match(out.text(), 'not pending: dismissed at the agent');
  assert.not.ok(
    stack.seen.some((e) => e.type === 'attention.answered' && e.subject === requested.id),
    'nothing recorded as answered',
  );
});

test('a form answer missing a required field exits 9 naming what to send; the request still waits', async () => {
  const s = await stack.openSession();
  const form = {
    ...permissionRequest(s),
    tool_name: 'AskUserQuestion',
    tool_input: {
      questions: [
        {
          question: 'Which database?',
          header: 'DB',
          options: [{ label: 'staging' }, { label: 'prod' }],
          multiSelect: false,
        },
      ],
    },
  };
  const reply = stack.postHook(form);
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  // D35: the question and its labels reach a reader that may see redacted text.
  const fields = (requested.data as { fields: { label: string; choices: { label: string }[] }[] }).fields;
  assert.equal(
    [fields[0]!.label, fields[0]!.choices.map((c) => c.label)],
    ['DB: Which database?', ['staging', 'prod']],
  );
  const out = sink();
  assert.is(
    await runRespond(undefined, respondFlags(s.session, { values: '{}' }), { out: out.stream, err: sink().stream }),
    RESPOND_EXIT.misfit,
    out.text(),
  );
  assert.match(out.text(), 'send --values with every required field');
  assert.is((await pendingJson(s.session)).requests.length, 1);
  assert.is(
    await runRespond(undefined, respondFlags(s.session, { values: '{"1":"1"}' }), {
      out: sink().stream,
      err: sink().stream,
    }),
    RESPOND_EXIT.answered,
  );
  assert.match(JSON.stringify((await reply).body), 'staging');
});

test('at a metadata ceiling a pending request shows the tool name only; labels are ids', async () => {
  const s = await stack.openSession();
  const reply = stack.postHook(permissionRequest(s));
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  // watch shows the id respond needs.
  assert.match(summarize(requested), `request ${requested.id}`);
  assert.match(summarize(requested), 'Bash: touch new-file.txt');
  const low = pendingOf([downLevel(requested, 'metadata')], Date.now())[0]!;
  assert.is(low.prompt, 'claude-code requests permission: Bash');
  assert.not.ok(JSON.stringify(low).includes('touch'), 'no command below redacted');
  assert.is(
    await runRespond('deny', respondFlags(s.session), { out: sink().stream, err: sink().stream }),
    RESPOND_EXIT.answered,
  );
  await reply;
  assert.is(age(42_000), '42s');
  assert.is(age(185_000), '3m 5s');
});

test.run();
