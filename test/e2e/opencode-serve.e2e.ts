// opencode 1.18.33 (D50) through the whole stack: the real `opencode serve`, password-protected,
// against the loopback mock Chat Completions API; this project's adapter follows it
// (`opencode --serve URL --serve-password-file F`) and the instructions go through the relay as
// a consumer sends them. With a slow tool call in flight: a steer is in the same turn's next
// model request, a queue in the first request of the next turn, a withdrawn queue never reaches
// the model, a start on idle opens a turn, a cancel stops the turn while what waits stays queued,
// a resend of one command id is delivered once; the stream validates and the audit is clean.
// Bad input: a wrong password is said once with the fix; a server that dies mid-session is said
// once and a queued instruction keeps a true outcome.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateEvent } from '../../src/protocol/validate.js';
import type { AepCommand } from '../../src/protocol/index.js';
import { opencodeServeSuite } from '../support/opencode-serve-suite.js';
import { chatMessagesOf, chatTextOf, startVendorStack } from '../support/vendor-e2e.js';

const INSTRUCT = 'x.opencode.control.instruct';
const DELIVERED = 'x.opencode.instruction.delivered';
const DROPPED = 'x.opencode.instruction.dropped';

const oc = opencodeServeSuite('aep-opencode-', 'opencode serve');
const { ws, of, all, slowTurn, finishedAfter } = oc;

const instruct = (data: Record<string, unknown>): AepCommand => oc.stack.command(oc.session, INSTRUCT, data);
async function accepted(cmd: AepCommand): Promise<AepCommand> {
  const settled = await oc.stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}
const withText = (text: string) => oc.mock.modelRequests().filter((r) => r.text.includes(text));
const requestsOf = (tag: string) =>
  oc.mock
    .modelRequests()
    .filter((r) => chatMessagesOf(r.body).some((m) => m.role === 'user' && chatTextOf(m).includes(tag)));

if (oc.installed) {
  test("the adapter follows the server's sessions: one opened there is on the stream, reached by the serve lane", async () => {
    // The first turn on a fresh server also loads its provider: a short one, seen as a run from start to finish.
    await oc.firstTurn('o-first');
    assert.ok(of('run.started'), 'the turn started as a run');
    const entry = (await oc.stack.consumer.roster()).find((r) => r.session === oc.session);
    assert.ok(entry?.lanes?.includes('serve'), JSON.stringify(entry));
    assert.equal(oc.stack.errors, []);
  });

  test("steer lands in the same turn's next request, with the server's receipt", async () => {
    const { release, finished } = await slowTurn('o-steer');
    const text = `STEER-OC-${oc.session.slice(-8)}`;
    const cmd = await accepted(instruct({ text, delivery: 'steer' }));
    const again = await oc.stack.send(cmd);
    assert.is(again.outcome, 'accepted', 'the resend gets the recorded ack again');
    release();
    const d = await oc.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'serve']);
    assert.match(String(d.data?.['ref']), /^msg_/);
    await finishedAfter(finished);
    const reqs = requestsOf('o-steer');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(reqs[0]!.text.includes(text), 'not in the request that asked for the tool');
    const next = reqs.find((r) => r.text.includes(text))!;
    const msgs = chatMessagesOf(next.body);
    const at = msgs.findIndex((m) => m.role === 'user' && chatTextOf(m).includes(text));
    assert.ok(at > 0 && msgs.slice(0, at).some((m) => m.role === 'tool'), 'after the running tool result');
    assert.ok(requestsOf('o-steer').indexOf(next) >= 1, "in the same turn's next request");
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
    assert.is(next.text.split(text).length - 1, 1, 'once in the request');
  });

  test('queue lands in the first request of the next turn, never in the running one', async () => {
    const { release, finished } = await slowTurn('o-queue');
    const text = `QUEUE-OC-${oc.session.slice(-8)}`;
    const cmd = await accepted(instruct({ text, delivery: 'queue' }));
    release();
    const d = await oc.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    await finishedAfter(finished + 1);
    const running = requestsOf('o-queue').filter((r) => !r.text.includes(text));
    assert.ok(running.length >= 2, 'the running turn made its requests without it');
    const first = withText(text)[0]!;
    const msgs = chatMessagesOf(first.body);
    assert.ok(
      msgs.at(-1)?.role === 'user' && chatTextOf(msgs.at(-1)!).includes(text),
      'the first request ends with it',
    );
  });

  test('a queue withdrawn before it is handed over never reaches the model', async () => {
    const { release, finished } = await slowTurn('o-withdraw');
    const text = `WITHDRAWN-OC-${oc.session.slice(-8)}`;
    const cmd = await accepted(instruct({ text, delivery: 'queue' }));
    const w = await accepted(
      oc.stack.command(oc.session, 'x.opencode.control.withdraw', { instruction: cmd.id }, null),
    );
    const dropped = await oc.stack.waitFor('dropped withdrawn', () => all(DROPPED).find((e) => e.subject === cmd.id));
    assert.equal([dropped.cause, dropped.data?.['reason']], [w.id, 'withdrawn']);
    release();
    await finishedAfter(finished);
    await new Promise((r) => setTimeout(r, 500));
    assert.is(withText(text).length, 0, 'no request carries the withdrawn text');
  });

  test('a start on the idle session opens a turn with the text as its prompt, delivered started', async () => {
    const finished = all('run.finished').length;
    const text = `[[TURN]] [[TOOLS:0]] START-OC-${oc.session.slice(-8)} say done`;
    const cmd = await accepted(instruct({ text, idle: 'start' }));
    const d = await oc.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.is(d.data?.['started'], true, JSON.stringify(d.data));
    await finishedAfter(finished);
    assert.ok(withText(text).length >= 1, 'the model saw it');
  });

  test('cancel stops the turn and what waits stays queued', async () => {
    const { release } = await slowTurn('o-cancel');
    const text = `KEPT-OC-${oc.session.slice(-8)}`;
    const kept = await accepted(instruct({ text, delivery: 'queue' }));
    const before = requestsOf('o-cancel').length;
    const cancel = await accepted(oc.stack.command(oc.session, 'control.cancel', { scope: 'run' }, null));
    const cancelled = await oc.stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.is(cancelled.data?.['by'], 'control');
    release();
    await new Promise((r) => setTimeout(r, 1000));
    assert.is(requestsOf('o-cancel').length, before, 'no request after the cancel');
    assert.not.ok(of(DELIVERED, kept.id), 'the queued one was not handed over by the stop');
    assert.not.ok(of(DROPPED, kept.id), 'nor dropped');
    // The next turn the person starts ends, and what waited goes then.
    const finished = all('run.finished').length;
    await oc.server.prompt(oc.session, `[[TURN]] [[TOOLS:0]] o-after say done`);
    const d = await oc.stack.waitFor('the kept queue delivered', () => of(DELIVERED, kept.id));
    assert.is(d.data?.['delivery'], 'queue');
    await finishedAfter(finished + 1);
    assert.ok(withText(text).length >= 1, 'the model saw it after the next turn');
  });

  test('the stream validates against the AEP schemas, and the audit of the adapter log is clean', async () => {
    const mine = oc.stack.events.filter((e) => e.session === oc.session);
    for (const e of mine) assert.equal(validateEvent(e), [], `${e.type} ${JSON.stringify(e).slice(0, 400)}`);
    const r = await oc.auditClean();
    const delivered = r.instructions.filter((i) => i.session === oc.session && i.status === 'delivered');
    assert.ok(delivered.length >= 4, `delivered: ${delivered.length}`);
    for (const i of delivered) assert.is(i.delivered?.lane, 'serve');
  });

  test('a wrong password is said once, naming the file and the fix', async () => {
    const bad = join(ws.root, 'wrong.password');
    writeFileSync(bad, 'not-the-password', { mode: 0o600 });
    const other = await startVendorStack('opencode', {}, { serve: oc.server.url, servePasswordFile: bad });
    try {
      await other.waitFor('the refusal', () => (other.errors.length > 0 ? other.errors : undefined));
      await new Promise((r) => setTimeout(r, 1500));
      assert.is(other.errors.length, 1, other.errors.join(' | '));
      assert.match(other.errors[0]!, 'SOURCE_UNAUTHORIZED');
      assert.match(other.errors[0]!, bad);
    } finally {
      await other.close();
    }
  });

  test('the server dies mid-session: said once; a queued instruction keeps a true outcome', async () => {
    await slowTurn('o-dies');
    const cmd = await accepted(instruct({ text: 'QUEUED-AT-LOSS', delivery: 'queue' }));
    const before = oc.stack.errors.length;
    await oc.server.kill('SIGKILL');
    await oc.stack.waitFor('the loss said', () => (oc.stack.errors.length > before ? true : undefined));
    await new Promise((r) => setTimeout(r, 1500));
    const said = oc.stack.errors.slice(before);
    assert.is(said.length, 1, `said once: ${said.join(' | ')}`);
    assert.match(said[0]!, 'opencode server');
    assert.not.ok(of(DELIVERED, cmd.id), 'never said delivered');
  });
}

test.run();
