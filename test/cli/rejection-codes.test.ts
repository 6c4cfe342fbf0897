// Every adapter rejection carries its stable code on the wire (README "Errors"): the extension
// attribute `code` of `control.rejected`, beside AEP's `reason`, visible to a metadata watcher that
// cannot see `detail`, and handed on as `code` by `instruct --json`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { sink, startTestStack } from './support.js';

test('a rejection names its rule in `code`, for the sender and for a metadata watcher', async () => {
  const stack = await startTestStack();
  const watcher = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.token, agent: 'meta-watcher' });
  try {
    const seen: AepEvent[] = [];
    await watcher.subscribe(
      { filter: { type: 'control.rejected' }, capture: 'metadata' },
      { onEvent: (e) => seen.push(e) },
    );
    const s = await stack.openSession();
    const flags = {
      relay: stack.relayUrl,
      token: stack.token,
      sender: 'alice',
      session: s.session,
      wait: true,
      timeout: '20000',
      ackWindow: '10000',
    };
    const cases: [string, string, string][] = [
      ['   ', 'invalid', 'text-empty'],
      ['x'.repeat(4001), 'invalid', 'text-too-long'],
    ];
    for (const [text, reason, code] of cases) {
      const out = sink();
      assert.is(
        await runInstruct(text, { ...flags, json: true }, { out: out.stream, err: sink().stream }),
        INSTRUCT_EXIT.rejected,
      );
      const o = JSON.parse(out.text()) as Record<string, unknown>;
      assert.is(o['reason'], reason);
      assert.is(o['code'], code);
      const human = sink();
      assert.is(await runInstruct(text, flags, { out: human.stream, err: sink().stream }), INSTRUCT_EXIT.rejected);
      assert.match(human.text(), `rejected by the adapter (${code}): `);
    }
    await stack.postHook(s.closing[1]!);
    await stack.waitFor((e) => e.session === s.session && e.type === 'session.ended');
    const out = sink();
    assert.is(
      await runInstruct('after the end', { ...flags, json: true }, { out: out.stream, err: sink().stream }),
      INSTRUCT_EXIT.rejected,
    );
    assert.is((JSON.parse(out.text()) as Record<string, unknown>)['code'], 'session-ended');

    const deadline = Date.now() + 5000;
    while (seen.filter((e) => e.session === s.session).length < 5 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const mine = seen.filter((e) => e.session === s.session);
    assert.equal(
      mine.map((e) => e['code']),
      ['text-empty', 'text-empty', 'text-too-long', 'text-too-long', 'session-ended'],
    );
    assert.ok(
      mine.every((e) => e.data?.['detail'] === undefined),
      'detail is redacted-class: a metadata watcher never sees it',
    );
  } finally {
    await watcher.close();
    await stack.stop();
  }
});

test.run();
