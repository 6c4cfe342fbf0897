// D43 end to end on Cline 3.0.65's real hub against the loopback mock Chat Completions API: with hub
// control on, `x.cline.control.instruct {idle: "start"}` sent through the relay to a session idle
// after its first turn begins one turn with the text as its user message, and is delivered
// `started: true` on the lane `hub`, named by the hub's prompt id. The session is described and
// rostered startable with hub control on; with the hub only tapped it is not, and a start is
// refused start-unsupported.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../src/audit/audit.js';
import { command, type AepCommand } from '../../src/protocol/index.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { clineHub, type ClineHub } from '../support/cline-hub-e2e.js';
import { e2eSuite, type E2e } from '../support/e2e-stack.js';
import { chatMessagesOf, chatTextOf } from '../support/vendor-e2e.js';

const SENDER = { agent: 'e2e-operator' };
/** A suite with the hub's control on (the default), and one whose adapter only taps the hub. */
type Side = { e2e: E2e<'cline'>; hub: ClineHub };
const ctl = e2eSuite('cline', { label: 'cline start' });
const on: Side = { e2e: ctl, hub: clineHub(ctl) };
const tapSuite = e2eSuite('cline', {
  label: 'cline start, hub tapped',
  env: { AEP_CLINE_HUB_CONTROL: '0', AEP_CLINE_HUB: '1' },
});
const tapped: Side = { e2e: tapSuite, hub: clineHub(tapSuite) };
/** The adapter starts before `cline hub ensure`: it reports the missing hub once, then connects. */
let startupErrors = 0;

const ofSession = (h: Side, session: string, type: string) =>
  h.e2e.stack.events.filter((e) => e.session === session && e.type === type);
/** Each event once: the consumer may see a redelivery (same id) of an event it already has. */
const count = (h: Side, session: string, type: string) => new Set(ofSession(h, session, type).map((e) => e.id)).size;

/** A hub session whose first turn (started as Cline's UI does) has ended. */
async function idleSession(h: Side, tag: string): Promise<string> {
  const session = await h.hub.createSession();
  const done = await h.hub.startTurn(session, `[[TURN]] ${tag} one quick command`);
  assert.ok(done.ok, JSON.stringify(done));
  await h.e2e.stack.waitFor('the first turn end', () => ofSession(h, session, 'run.finished')[0]);
  return session;
}

/** What the relay's roster says of the session. */
async function rostered(h: Side, session: string) {
  const c = await RelayConsumer.connect({
    url: h.e2e.stack.relayUrl,
    token: h.e2e.stack.relayToken,
    agent: SENDER.agent,
  });
  try {
    return (await c.roster()).find((e) => e.session === session);
  } finally {
    await c.close();
  }
}

function instructStart(h: Side, session: string, text: string) {
  const cmd: AepCommand = command(SENDER, session, {
    type: 'x.cline.control.instruct',
    data: { text, idle: 'start' },
    capture: 'redacted',
  });
  return h.e2e.stack.send(cmd).then((settled) => ({ cmd, settled }));
}

if (ctl.installed) {
  test.before(() => {
    startupErrors = on.e2e.stack.errors.length;
  });

  test('instruct idle start on an idle session begins one turn with the text as its user message: delivered started on the hub lane', async () => {
    const session = await idleSession(on, 'CSTARTFIRST');
    const described = ofSession(on, session, 'x.cline.session.described').find(
      (e) => e.data?.['startable'] !== undefined,
    );
    assert.is(described?.data?.['startable'], true, 'described startable with hub control on');
    assert.is((await rostered(on, session))?.startable, true, 'rostered startable');
    const before = on.e2e.mock.modelRequests().length;
    const text = `[[TURN]] CLINE-START-${session.slice(-8)} one command`;
    const { cmd, settled } = await instructStart(on, session, text);
    assert.is(settled.outcome, 'accepted', `${JSON.stringify(settled)} ${on.e2e.stack.errors.join('; ')}`);
    const d = await on.e2e.stack.waitFor('delivered', () =>
      on.e2e.stack.find(session, 'x.cline.instruction.delivered', cmd.id),
    );
    assert.equal([d.data?.['started'], d.data?.['lane']], [true, 'hub']);
    assert.match(String(d.data?.['ref']), /^pending_/, "the hub's id for the prompt");
    assert.is(d.data?.['delivery'], undefined, 'the prompt of the turn it began: no delivery into a turn');
    await on.e2e.stack.waitFor('the turn it began to end', () =>
      count(on, session, 'run.finished') >= 2 ? true : undefined,
    );
    const runStarts = ofSession(on, session, 'run.started');
    assert.is(count(on, session, 'run.started'), 2, 'the first turn and the one it began');
    assert.ok(d.seq! < runStarts.at(-1)!.seq!, 'delivered as the turn began, before its start moment');
    // The next model request is the new turn's first: the text is its last message, a user's.
    const turn = on.e2e.mock.modelRequests().slice(before);
    assert.ok(turn.length > 0, 'the model was asked');
    const first = chatMessagesOf(turn[0]!.body);
    assert.equal([first.at(-1)?.role, chatTextOf(first.at(-1)!)], ['user', text]);
    // One turn: every request since holds the text once, as that one user message.
    for (const r of turn) {
      const users = chatMessagesOf(r.body).filter((m) => m.role === 'user' && chatTextOf(m).includes(text));
      assert.is(users.length, 1, 'the text once per request');
    }
    const pending = await on.hub.driver.command('session.pending_prompts', session, {});
    assert.equal(pending.payload?.prompts, [], 'the hub holds nothing more for the session');
    const audit = await auditFiles([on.e2e.stack.logPath]);
    const rec = audit.instructions.find((i) => i.id === cmd.id);
    assert.is(rec?.status, 'delivered');
    assert.equal(
      audit.violations.filter((v) => v.message.includes(cmd.id)),
      [],
      'no start beside a running turn',
    );
  });

  test('the adapter reported no errors once the hub was up', () => {
    assert.equal(on.e2e.stack.errors.slice(startupErrors), []);
  });

  test('with the hub only tapped the session is not startable, and a start is refused start-unsupported', async () => {
    {
      const session = await idleSession(tapped, 'CTAPFIRST');
      const described = ofSession(tapped, session, 'x.cline.session.described');
      assert.ok(described.length > 0, 'described');
      assert.ok(
        described.every((e) => e.data?.['startable'] !== true),
        'never described startable',
      );
      assert.not.equal((await rostered(tapped, session))?.startable, true, 'not rostered startable');
      const requests = tapped.e2e.mock.modelRequests().length;
      const text = `[[TURN]] CLINE-TAPPED-${session.slice(-8)}`;
      const { settled } = await instructStart(tapped, session, text);
      assert.is(settled.outcome, 'rejected', JSON.stringify(settled));
      if (settled.outcome === 'rejected')
        assert.equal([settled.reason, settled.code], ['unsupported', 'start-unsupported']);
      assert.is(tapped.e2e.mock.modelRequests().length, requests, 'the model was not asked');
    }
  });
}

test.run();
