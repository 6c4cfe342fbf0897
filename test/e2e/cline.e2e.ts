// Cline 3.0.65 end to end: the real CLI's hub daemon (`cline hub ensure`) runs the session against
// the loopback mock Chat Completions API; the real installer writes Cline's ten hook files, which
// run the shim to this project's adapter; the adapter's hub connection (AEP_CLINE_HUB_CONTROL=1)
// carries send_input; every command goes through this project's relay as a consumer sends it.
// The session itself is created and started through the hub by the test (cline-hub-observed §1.7):
// a `[[WAITFILE]]` shell call holds the turn open until the test releases it.
// A failed wait prints the evidence (vendor-e2e.ts): the hub's own log, each hook's shim outcome
// (AEP_HOOK_TRACE=all), the adapter's errors and status lines, the relay's log and connections.
// Cause of the runs that failed 0/7 with an empty stream: the adapter's relay link completed its
// hello while the adapter was still opening the Cline hub (before the outbox subscribed to the
// link's state), and the link's state was a plain stream of changes, so the outbox never heard
// it was up: every hook event stayed in the adapter's log and "relay connected" was never said.
// The link now tells a late subscriber its current state and gives up a handshake with no hello
// within 10 s (test/relay/link-handshake.test.ts reproduces both).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { clineHub } from '../support/cline-hub-e2e.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { projectRoot } from '../support/shared-dir.js';
import { bodyHas, chatMessagesOf } from '../support/vendor-e2e.js';

const e2e = e2eSuite('cline');
const hub = clineHub(e2e);

const sendInput = (session: string, text: string, delivery?: string): AepCommand =>
  e2e.stack.command(session, 'x.cline.control.send_input', delivery === undefined ? { text } : { text, delivery });

/** Each event once: the consumer may see a redelivery (same id) of an event it already has. */
const causedBy = (id: string): string[] => [
  ...new Map(e2e.stack.events.filter((e) => e.cause === id).map((e) => [e.id, e.type])).values(),
];
const find = (type: string, cause: string): AepEvent | undefined =>
  e2e.stack.events.find((e) => e.type === type && e.cause === cause);
const waitUntil = <T>(what: string, probe: () => T | undefined, limitMs = 60_000): Promise<T> =>
  e2e.stack.waitFor(what, probe, limitMs);

if (e2e.installed) {
  test('send_input steer during a slow tool reaches the next model request of the same turn; input.sent and input.consumed name the command', async () => {
    const { session, release, turn } = await hub.slowTurn('STEERTEST');
    const cmd = sendInput(session, 'STEER-MARK-1 prefer the small fix', 'steer');
    const settled = await e2e.stack.send(cmd);
    assert.is(settled.outcome, 'accepted', `${JSON.stringify(settled)} ${e2e.stack.errors.join('; ')}`);
    const sent = await waitUntil('input.sent', () => find('x.cline.input.sent', cmd.id));
    assert.equal(sent.data, { delivery: 'steer' });
    release();
    const done = await turn;
    assert.ok(done.ok, JSON.stringify(done));
    const consumed = await waitUntil('input.consumed', () => find('x.cline.input.consumed', cmd.id));
    assert.type((consumed.data as { queued_ms: number }).queued_ms, 'number');
    const steered = e2e.withText('STEER-MARK-1');
    assert.ok(steered.length > 0, 'the steer reached a model request');
    assert.ok(
      bodyHas(steered[0]!.body, 'STEERTEST'),
      'the same turn: its first request carrying the steer is of the STEERTEST turn',
    );
    assert.ok(
      chatMessagesOf(steered[0]!.body).some((m) => m.role === 'tool'),
      'after the tool result',
    );
    assert.equal(causedBy(cmd.id), ['control.accepted', 'x.cline.input.sent', 'x.cline.input.consumed']);
  });

  test('send_input queue during a turn reaches the first request of the next turn', async () => {
    const { session, release, turn } = await hub.slowTurn('QUEUETEST');
    const cmd = sendInput(session, 'QUEUE-MARK-1 then update the changelog');
    const settled = await e2e.stack.send(cmd);
    assert.is(settled.outcome, 'accepted', `${JSON.stringify(settled)} ${e2e.stack.errors.join('; ')}`);
    assert.equal((await waitUntil('input.sent', () => find('x.cline.input.sent', cmd.id))).data, { delivery: 'queue' });
    const before = e2e.mock.modelRequests().length;
    release();
    await turn;
    await waitUntil('input.consumed', () => find('x.cline.input.consumed', cmd.id));
    const queued = await waitUntil('a request with the queued text', () => e2e.withText('QUEUE-MARK-1')[0]);
    const later = e2e.mock.modelRequests().slice(before);
    const first = later.indexOf(queued);
    assert.ok(first >= 0);
    // The current turn's remaining request(s) never saw it; the one that did ends with it as the user message.
    assert.ok(later.slice(0, first).every((r) => !bodyHas(r.body, 'QUEUE-MARK-1')));
    const last = chatMessagesOf(queued.body).at(-1)!;
    assert.is(last.role, 'user');
    assert.ok(bodyHas(last.content, 'QUEUE-MARK-1'));
  });

  test('an idle session refuses send_input: it would start a turn', async () => {
    const session = await hub.createSession();
    // A finished turn leaves the session idle; the hooks saw it open and close.
    const done = await hub.startTurn(session, '[[TURN]] IDLETEST one quick command');
    assert.ok(done.ok, JSON.stringify(done));
    await waitUntil('the turn end', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'run.finished'),
    );
    const requests = e2e.mock.modelRequests().length;
    const cmd = sendInput(session, 'IDLE-MARK-1 should not start anything', 'steer');
    const settled = await e2e.stack.send(cmd);
    assert.is(settled.outcome, 'rejected', JSON.stringify(settled));
    assert.equal(find('control.rejected', cmd.id)!.data, {
      reason: 'refused',
      detail: 'session idle: send_input would start a turn; send it while the agent is working',
    });
    await new Promise((r) => setTimeout(r, 500));
    assert.is(e2e.mock.modelRequests().length, requests, 'no turn started');
    assert.is(e2e.withText('IDLE-MARK-1').length, 0);
  });

  test('instruct reaches the next model request after a tool call', async () => {
    const { session, release, turn } = await hub.slowTurn('INSTRUCTTEST');
    const { cmd, settled } = await e2e.stack.instruct(session, 'INSTRUCT-MARK-1 keep the diff small');
    assert.is(settled.outcome, 'accepted');
    release();
    await turn;
    const delivered = await waitUntil('delivered', () => find('x.cline.instruction.delivered', cmd.id));
    assert.type((delivered.data as { queued_ms: number }).queued_ms, 'number');
    const carried = e2e.withText('INSTRUCT-MARK-1');
    assert.ok(carried.length > 0);
    assert.ok(bodyHas(carried[0]!.body, 'hook_context'), "as Cline's <hook_context> user message");
    assert.ok(chatMessagesOf(carried[0]!.body).some((m) => m.role === 'tool'));
  });

  test('control.cancel aborts the run and run.cancelled names the command', async () => {
    const { session, release, turn } = await hub.slowTurn('CANCELTEST', 2);
    const wrong = e2e.stack.command(session, 'control.cancel', { scope: 'session' }, null);
    const refused = await e2e.stack.send(wrong);
    assert.is(refused.outcome, 'rejected', 'the hub has no session stop');
    const cmd = e2e.stack.command(session, 'control.cancel', { scope: 'run' }, null);
    const settled = await e2e.stack.send(cmd);
    assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
    const cancelled = await waitUntil('run.cancelled', () => find('run.cancelled', cmd.id));
    assert.equal(cancelled.data, { by: 'control', decided_by: { identity: 'e2e-operator', surface: 'cli' } });
    release();
    await turn;
    // The aborted turn made no further model request for its second tool call.
    assert.ok(e2e.withText('CANCELTEST').length <= 2, `requests: ${e2e.withText('CANCELTEST').length}`);
    const again = await e2e.stack.send(e2e.stack.command(session, 'control.cancel', { scope: 'run' }, null));
    assert.is(again.outcome, 'rejected', 'no active run left to cancel');
    // The hub session outlives the abort (3.0.65 fires SessionShutdown, the session stays idle):
    // a new turn reopens it and steering works again.
    const next = await hub.startTurn(session, '[[TURN]] AFTERCANCEL one quick command');
    assert.ok(next.ok, JSON.stringify(next));
    await waitUntil('reopened', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'x.cline.session.reopened'),
    );
  });

  test('an approval answered through aep-steer respond runs or refuses the tool; one answered in Cline is mirrored oob', async () => {
    const respond = async (session: string, request: string, word: string): Promise<void> => {
      const r = await e2e.respond(session, request, word);
      assert.is(r.code, RESPOND_EXIT.answered, r.out);
    };
    // approve: the tool runs and its output reaches the model.
    const { session: s1, turn: t1, request: r1 } = await hub.asking('APPROVETEST');
    assert.equal((r1.data as { respond_via: string[] }).respond_via, ['control', 'oob']);
    assert.equal(
      (r1.data as { options: { id: string }[] }).options.map((o) => o.id),
      ['approve', 'deny'],
    );
    assert.is(r1.subject, 'run_commands');
    await respond(s1, r1.id, 'approve');
    assert.ok((await t1).ok);
    assert.ok(
      e2e.toolOutputs('APPROVETEST').some((t) => t.includes('TOOL_RAN_')),
      'the approved tool ran',
    );
    const answered = await waitUntil('attention.answered', () =>
      e2e.stack.events.find((e) => e.type === 'attention.answered' && e.subject === r1.id),
    );
    assert.equal(answered.data, { answer: { option: 'approve' }, via: 'control' });
    await waitUntil('attention.resolved', () =>
      e2e.stack.events.find((e) => e.type === 'attention.resolved' && e.subject === r1.id),
    );
    // deny: the tool is refused and never runs.
    const { session: s2, turn: t2, request: r2 } = await hub.asking('DENYTEST');
    await respond(s2, r2.id, 'deny');
    assert.ok((await t2).ok);
    const denied = e2e.toolOutputs('DENYTEST');
    assert.ok(
      denied.length > 0 && denied.every((t) => !t.includes('TOOL_RAN_')),
      `the denied tool did not run: ${denied.join(' | ')}`,
    );
    // out of band: Cline's own client answers; the adapter mirrors it.
    const { session: s3, turn: t3, request: r3 } = await hub.asking('OOBTEST');
    const pending = await waitUntil('the hub approval', () => hub.approvalIds.get(s3));
    assert.ok((await hub.driver.command('approval.respond', s3, { approvalId: pending, approved: true })).ok);
    assert.ok((await t3).ok);
    const oob = await waitUntil('the oob answer', () =>
      e2e.stack.events.find((e) => e.type === 'attention.answered' && e.subject === r3.id),
    );
    assert.equal(oob.data, { answer: { option: 'approve' }, via: 'oob' });
    await waitUntil('attention.resolved', () =>
      e2e.stack.events.find((e) => e.type === 'attention.resolved' && e.subject === r3.id),
    );
  });

  test('the stream of the run passes aep-steer audit; the hub stops by pid and nothing is left listening', async () => {
    assert.ok(readFileSync(e2e.stack.logPath, 'utf8').length > 0);
    const r = await auditFiles([e2e.stack.logPath]);
    assert.equal(r.violations, [], JSON.stringify(r.violations));
    assert.not.ok(
      r.notes.some((n) => n.kind === 'machine-skipped'),
      'replayed through the session machine',
    );
    assert.ok(r.instructions.length >= 4);
    assert.ok(r.instructions.every((i) => i.status !== 'unacknowledged'));
    // The relay's copy of the stream, and the command as a user runs it.
    const exported = join(e2e.home.root, 'relay-export.jsonl');
    writeFileSync(exported, `${e2e.stack.events.map((e) => JSON.stringify(e)).join('\n')}\n`);
    assert.equal((await auditFiles([exported])).violations, []);
    const cli = spawnSync(
      process.execPath,
      [join(projectRoot, 'bin', 'aep-steer.js'), 'audit', e2e.stack.logPath, exported],
      { encoding: 'utf8' },
    );
    assert.is(cli.status, 0, cli.stdout + cli.stderr);
    assert.ok(hub.pid !== undefined && existsSync(`/proc/${hub.pid}`), 'the hub ran until now');
    await hub.stop();
    assert.not.ok(existsSync(`/proc/${hub.pid}`), 'the hub process is gone');
    assert.not.ok(await listening(Number(e2e.home.env.CLINE_HUB_PORT)), 'nothing listens on the hub port');
  });

  function listening(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
  }
}

test.run();
