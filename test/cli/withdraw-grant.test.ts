// D32 on a real relay serving a tokens file (mode 600) and a real Claude Code adapter: only an
// instruction's sender may withdraw it, or a token the file grants withdraw for that session,
// claimed with --granted. The relay checks the claim (a token without the grant is refused
// unauthorized and the adapter never sees the command); the adapter honours a checked one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runWithdraw, WITHDRAW_EXIT } from '../../src/cli/withdraw-command.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { sendInstruction } from '../../src/consumer/instruct.js';
import { command } from '../../src/protocol/build.js';
import { GRANT_ATTR } from '../../src/protocol/types.js';
import { sink, startTestStack, type TestStack } from './support.js';

const TOKENS = {
  alice: 'alice-token-0123456789',
  bob: 'bob-token-0123456789',
  lead: 'lead-token-0123456789',
  scoped: 'scoped-token-0123456789',
};
const STEER = ['x.*.control.instruct', 'x.*.control.withdraw'];

let stack: TestStack;
let alice: RelayConsumer;
test.before(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'aep-grant-')), 'tokens.json');
  writeFileSync(
    file,
    JSON.stringify({
      tokens: [
        { token: TOKENS.alice, identity: 'alice', commands: STEER },
        { token: TOKENS.bob, identity: 'bob', commands: STEER },
        { token: TOKENS.lead, identity: 'lead', commands: ['x.*.control.withdraw'], withdraw: ['*'] },
        { token: TOKENS.scoped, identity: 'scoped', commands: ['x.*.control.withdraw'], withdraw: ['other-*'] },
      ],
    }),
    { mode: 0o600 },
  );
  stack = await startTestStack({ tokensFile: file });
  alice = await RelayConsumer.connect({ url: stack.relayUrl, token: TOKENS.alice, agent: 'alice' });
});
test.after(async () => {
  await alice?.close();
  await stack?.stop();
});

const withdraw = async (
  who: keyof typeof TOKENS,
  session: string,
  instruction: string,
  extra: Record<string, unknown> = {},
) => {
  const out = sink();
  const flags = {
    relay: stack.relayUrl,
    token: TOKENS[who],
    sender: who,
    session,
    instruction,
    timeout: '10000',
    json: true,
    ...extra,
  };
  const code = await runWithdraw(flags, { out: out.stream, err: out.stream });
  return { code, o: JSON.parse(out.text()) as Record<string, unknown> };
};
const contextOf = (reply: { body: unknown }) =>
  (reply.body as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;

async function aliceQueues(text: string) {
  const s = await stack.openSession();
  const sent = await sendInstruction(
    alice,
    { sender: 'alice' },
    { session: s.session, text, noWait: true, timeoutMs: 10_000 },
  );
  assert.is(sent.outcome, 'accepted');
  return { s, id: (sent as { command: string }).command };
}

test('another sender is refused not-sender; claiming a grant it lacks is refused by the relay, and the adapter never sees it', async () => {
  const { s, id } = await aliceQueues('rename the module');
  const bob = await withdraw('bob', s.session, id);
  assert.is(bob.code, WITHDRAW_EXIT.rejected);
  assert.equal([bob.o['outcome'], bob.o['code']], ['rejected', 'not-sender']);

  const claimed = await withdraw('bob', s.session, id, { granted: true });
  assert.is(claimed.code, WITHDRAW_EXIT.refused);
  assert.equal([claimed.o['outcome'], claimed.o['code'], claimed.o['by']], ['refused', 'unauthorized', 'relay']);
  assert.match(String(claimed.o['detail']), 'bob is not granted withdraw for session');
  const scoped = await withdraw('scoped', s.session, id, { granted: true });
  assert.equal([scoped.code, scoped.o['code']], [WITHDRAW_EXIT.refused, 'unauthorized']);
  assert.match(String(scoped.o['detail']), `scoped is not granted withdraw for session ${s.session}`);
  for (const c of [claimed.o['command'], scoped.o['command']]) {
    assert.not.ok(
      stack.seen.some((e) => e.cause === c),
      'no ack: the adapter never received a refused command',
    );
  }
  // Nothing was taken back: the agent still reads it.
  assert.is(contextOf(await stack.postHook(s.toolCall[0]!)), 'rename the module');
});

test("a token granted withdraw takes back another sender's instruction with --granted; without it, not-sender", async () => {
  const { s, id } = await aliceQueues('drop the fixtures');
  const plain = await withdraw('lead', s.session, id);
  assert.equal([plain.code, plain.o['code']], [WITHDRAW_EXIT.rejected, 'not-sender']);
  const granted = await withdraw('lead', s.session, id, { granted: true });
  assert.is(granted.code, WITHDRAW_EXIT.withdrawn, JSON.stringify(granted.o));
  const cmd = stack.seen.find((e) => e.id === granted.o['command'])!;
  assert.equal(
    [cmd.agent, cmd[GRANT_ATTR]],
    ['lead', 'withdraw'],
    'the command names its sender and the grant it used',
  );
  const dropped = stack.seen.find((e) => e.id === granted.o['dropped'])!;
  assert.equal(
    [dropped.type, dropped.subject, dropped.cause, dropped.data?.['reason']],
    ['x.claude-code.instruction.dropped', id, cmd.id, 'withdrawn'],
  );
  assert.is(
    contextOf(await stack.postHook(s.toolCall[0]!)),
    undefined,
    'the withdrawn instruction never reaches the agent',
  );
});

test('the grant attribute on anything but a withdraw is refused unauthorized', async () => {
  const s = await stack.openSession();
  const forged = command({ agent: 'alice' }, s.session, {
    type: 'x.claude-code.control.instruct',
    data: { text: 'x' },
    capture: 'redacted',
    extensions: { [GRANT_ATTR]: 'withdraw' },
  });
  const sent = await sendInstructionRaw(forged);
  assert.equal(sent, {
    code: 'unauthorized',
    detail: 'the grant attribute names what a token was granted: only "withdraw", on a withdraw, edit, move or promote',
  });
});

/** Sends a built command on alice's connection and resolves with the relay's refusal. */
async function sendInstructionRaw(cmd: ReturnType<typeof command>): Promise<{ code: string; detail?: string }> {
  const { sendAndFollow } = await import('../../src/consumer/settle.js');
  const { settlement } = await sendAndFollow(alice, cmd, {
    filter: { session: cmd.session!, cause: cmd.id },
    settles: () => true,
    timeoutMs: 5000,
  });
  assert.is(settlement.outcome, 'refused');
  const r = settlement as { code: string; detail?: string };
  return { code: r.code, ...(r.detail ? { detail: r.detail } : {}) };
}

test.run();
