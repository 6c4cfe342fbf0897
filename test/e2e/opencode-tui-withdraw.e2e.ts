// D32 on the real opencode 1.18.33 against the loopback mock Chat Completions API, for a steer into
// a turn of the V1 loop (the routes the attached TUI prompts through: `POST /session`, then
// `prompt_async`), through this project's adapter following the password-protected server. While
// the turn's slow shell call runs, a steer goes in by V1 `prompt_async` and waits in the session's
// messages, unread. opencode cannot give it back: V1 `DELETE /session/:id/message/:id` answers 409
// `SessionBusyError` while the session is busy (asked here of the server itself), and there is no
// other route, so `withdraw` is refused `already-delivered` and nothing on the server is deleted;
// the steer is then delivered on its receipt and is in the same turn's next request, after the
// tool's result, as the refusal said. The audit of the adapter's log is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { opencodeRig } from '../support/opencode-stack.js';
import { until } from '../support/until.js';
import { chatMessagesOf, chatTextOf } from '../support/vendor-e2e.js';

const INSTRUCT = 'x.opencode.control.instruct';
const WITHDRAW = 'x.opencode.control.withdraw';
const rig = opencodeRig('opencode-tui-withdraw');

type Message = { info: { id: string; role: string }; parts?: { type?: string; text?: string }[] };
/** The session's messages as the server keeps them. */
async function messages(session: string): Promise<Message[]> {
  const r = await rig.server.api('GET', `/session/${session}/message`);
  return r.status === 200 ? (r.body as Message[]) : [];
}
const holding = async (session: string, text: string): Promise<Message | undefined> =>
  (await messages(session)).find((m) => m.info.role === 'user' && m.parts?.some((p) => p.text?.includes(text)));

if (rig.installed) {
  test('a steer admitted into a V1 turn cannot be withdrawn: refused already-delivered, then delivered in that turn', async () => {
    const created = await rig.server.api('POST', '/session', {});
    assert.is(created.status, 200, JSON.stringify(created.body));
    const session = created.body.id as string;
    await rig.stack.waitFor('the session on the stream', () => rig.stack.find(session, 'session.started'));
    const gate = join(rig.ws.root, 'withdraw.go');
    const tag = 'o-v1-withdraw run the slow command';
    const prompted = await rig.server.api('POST', `/session/${session}/prompt_async`, {
      model: { providerID: 'mock', modelID: 'mock-model' },
      parts: [{ type: 'text', text: `[[TURN]] [[WAITFILE:${gate}]] ${tag}` }],
    });
    assert.is(prompted.status, 204);
    await until(
      () => rig.mock.modelRequests().some((r) => r.text.includes(tag)),
      'the model asked for the slow tool',
      60_000,
    );

    const text = `STEER-NOT-WITHDRAWN-${session.slice(-8)}`;
    const cmd = await rig.stack.accepted(session, INSTRUCT, { text, delivery: 'steer' });
    await until(async () => (await holding(session, text)) !== undefined, 'the steer admitted by the server', 30_000);
    const steer = (await holding(session, text))!;
    // What the server says to a delete now: it is busy, and keeps the message.
    const del = await rig.server.api('DELETE', `/session/${session}/message/${steer.info.id}`);
    assert.equal([del.status, del.body?._tag], [409, 'SessionBusyError']);

    const w = rig.stack.command(session, WITHDRAW, { instruction: cmd.id }, null);
    const settled = await rig.stack.send(w);
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
      'refused',
      'already-delivered',
    ]);
    assert.ok(await holding(session, text), 'the server still holds it');
    assert.not.ok(
      rig.stack.events.some((e) => e.session === session && e.type === 'x.opencode.instruction.dropped'),
      'nothing dropped',
    );

    writeFileSync(gate, '');
    const d = await rig.stack.delivered(session, cmd);
    assert.is(d.data?.['delivery'], 'steer');
    await until(
      () => rig.mock.modelRequests().some((r) => r.text.includes(text)),
      'the steer in a model request',
      30_000,
    );
    const carrying = rig.mock.modelRequests().find((r) => r.text.includes(text))!;
    const all = chatMessagesOf(carrying.body);
    const at = all.findIndex((m) => m.role === 'user' && chatTextOf(m).includes(text));
    assert.is(all[at - 1]?.role, 'tool', 'right after the slow call, in the same turn');
  });

  test("the audit of the adapter's log is clean; the adapter reported no errors", async () => {
    const r = await auditFiles([rig.stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    assert.equal(rig.stack.errors, []);
  });
}

test.run();
