// D43 on the OpenHands lane, against the stand-in agent server and the mock model: a start on an
// idle conversation is the append with `run: true`, and its receipt is the socket's flip into
// running after our message (the turn's run id, `started`); a start that finds a turn running
// goes in as a steer (`run: false`, read by the loop's next step: one turn, never a second) or,
// asked to become a queue, is refused with nothing written; a conversation paused or waiting
// for confirmation is not started.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom } from 'rxjs';
import { AgentServer } from '../../../src/adapters/openhands/agent-server.js';
import { openHandsLane } from '../../../src/adapters/openhands/control.js';
import { startReceiver, type Receiver } from '../../../src/adapters/openhands/receiver.js';
import { statusOf, type OpenHandsFrame, type Status } from '../../../src/adapters/openhands/map.js';
import type { Lane, LaneFact } from '../../../src/streams/lane.js';
import { startMockOpenAi, type MockOpenAi } from '../../support/mock-openai.js';
import { startOpenHandsServer, type StandIn } from '../../support/openhands-server.js';
import { auditFiles } from '../../../src/audit/audit.js';
import { acceptsOf } from '../../../src/consumer/roster.js';
import { RelayConsumer } from '../../../src/consumer/connection.js';
import { sendInstruction } from '../../../src/consumer/instruct.js';
import { startOpenHandsStack } from '../../support/openhands-stack.js';

const KEY = 'oh-key-0';

interface Rig {
  model: MockOpenAi;
  server: StandIn;
  receiver: Receiver;
  lane: Lane;
  frames: OpenHandsFrame[];
  /** Resolves once the receiver shows the conversation in this status. */
  status(id: string, s: Status): Promise<void>;
  /** The lane's receipt for a command. */
  receipt(commandId: string): Promise<Extract<LaneFact, { kind: 'delivered' }>>;
}

async function withRig(fn: (r: Rig) => Promise<void>): Promise<void> {
  const model = await startMockOpenAi();
  const server = await startOpenHandsServer({ modelUrl: model.baseUrl, keys: [KEY] });
  const agent = new AgentServer({ url: server.url, key: KEY });
  // What the receiver reports while the test runs fails it; a poll in flight when the rig closes may still report.
  const errors: string[] = [];
  let running = true;
  const receiver = startReceiver({
    server: agent,
    pollMs: 50,
    onError: (e) => {
      if (running) errors.push(e.message);
    },
  });
  const lane = openHandsLane(agent, receiver);
  const frames: OpenHandsFrame[] = [];
  receiver.arrivals$.subscribe((a) => frames.push(a.body as unknown as OpenHandsFrame));
  const status = (id: string, s: Status) =>
    firstValueFrom(receiver.arrivals$.pipe(filter(() => receiver.status(id) === s))).then(() => undefined);
  const receipt = (commandId: string) =>
    firstValueFrom(
      lane.facts$.pipe(
        filter(
          (f): f is Extract<LaneFact, { kind: 'delivered' }> => f.kind === 'delivered' && f.commandId === commandId,
        ),
      ),
    );
  try {
    await fn({ model, server, receiver, lane, frames, status, receipt });
    assert.equal(errors, [], 'the receiver reported no error');
  } finally {
    running = false;
    await receiver.close();
    await server.close();
    await model.close();
  }
}

/** The conversation's flips into running, as the receiver framed them: one per turn. */
const turnsOf = (frames: OpenHandsFrame[], id: string) =>
  frames.filter(
    (f) => f.conversation_id === id && statusOf(f.event) === 'running' && f.status_before !== 'running' && !f.history,
  ).length;

const appends = (server: StandIn, id: string) =>
  server.requests.filter((q) => q.method === 'POST' && q.path === `/api/conversations/${id}/events`);

test('an idle conversation: the append runs with run true, and the receipt is the turn it began', async () => {
  await withRig(async ({ model, server, receiver, lane, frames, status, receipt }) => {
    const id = server.create({ message: 'hello' });
    if (receiver.status(id) !== 'idle') await status(id, 'idle');
    const text = '[[TURN]] START-CANARY: write the release notes';
    const delivered = receipt('cmd-start');
    assert.equal(await lane.startTurn!({ session: id, commandId: 'cmd-start', text, otherwise: 'steer' }), {
      ok: true,
    });
    const fact = await delivered;
    assert.is(fact.started, true);
    assert.is(fact.ref, `run:${id}:1`, "the turn's id is the bridge's run id");
    assert.equal(
      appends(server, id).map((q) => (q.body as { run?: unknown }).run),
      [true],
    );
    await server.until(id, 'finished');
    assert.ok(
      model.modelRequests().some((r) => r.text.includes('START-CANARY')),
      "the turn's model request carries the text",
    );
    assert.is(turnsOf(frames, id), 1);
  });
});

test('a turn began meanwhile: a start goes in as a steer, read by the running loop (one turn); as a queue it is refused unsent', async () => {
  await withRig(async ({ model, server, receiver, lane, frames, status, receipt }) => {
    const held = model.hold();
    const id = server.create({ message: '[[TURN]] [[TOOLS:1]] list the files', run: true });
    await held.arrived;
    if (receiver.status(id) !== 'running') await status(id, 'running');

    const queued = await lane.startTurn!({ session: id, commandId: 'cmd-q', text: 'QUEUE-CANARY', otherwise: 'queue' });
    assert.is(queued.ok, false);
    assert.match(!queued.ok ? queued.detail : '', 'no next-turn queue');
    assert.is(appends(server, id).length, 0, 'nothing is written for a start it cannot honour');

    const delivered = receipt('cmd-s');
    const steered = await lane.startTurn!({
      session: id,
      commandId: 'cmd-s',
      text: 'STEER-CANARY',
      otherwise: 'steer',
    });
    assert.equal(steered, { ok: true, became: 'steer' });
    assert.equal(
      appends(server, id).map((q) => (q.body as { run?: unknown }).run),
      [false],
      'appended without run: the running loop reads it',
    );
    held.release();
    const fact = await delivered;
    assert.is(fact.started, undefined, 'it did not begin the turn');
    await server.until(id, 'finished');
    assert.ok(model.modelRequests().some((r) => r.text.includes('STEER-CANARY')));
    assert.is(turnsOf(frames, id), 1, 'never a second turn');
  });
});

test('paused or waiting for confirmation: not started, nothing written; an unseen conversation is unreachable', async () => {
  await withRig(async ({ server, receiver, lane, status }) => {
    const id = server.create({ message: '[[TURN]] [[TOOLS:1]] list the files', run: true, confirmation: true });
    if (receiver.status(id) !== 'waiting_for_confirmation') await status(id, 'waiting_for_confirmation');
    const waiting = await lane.startTurn!({ session: id, commandId: 'cmd-w', text: 'hi', otherwise: 'steer' });
    assert.is(waiting.ok, false);
    assert.match(!waiting.ok ? waiting.detail : '', 'waiting_for_confirmation');
    assert.is(appends(server, id).length, 0);

    const unseen = await lane.startTurn!({ session: 'no-such', commandId: 'cmd-u', text: 'hi', otherwise: 'steer' });
    assert.equal(unseen.ok ? undefined : unseen.reason, 'unreachable');
  });
});

test('through the relay: instruct with idle start begins the turn, delivered started with the run id; without it, refused start-only', async () => {
  const stack = await startOpenHandsStack({ control: true, flags: { instruct: true } });
  const consumer = await RelayConsumer.connect({ url: stack.relay.socketUrl, token: stack.token, agent: 'alice' });
  try {
    const id = stack.server.create({ message: 'hello' });
    await stack.waitFor((e) => e.session === id && e.type === 'state.snapshot');
    const entry = (await consumer.roster()).find((r) => r.session === id)!;
    assert.ok(acceptsOf(entry)?.includes('x.openhands.control.instruct'), 'hello takes instruct with the control gate');
    const described = await stack.waitFor((e) => e.session === id && e.type === 'x.openhands.session.described');
    assert.is(described.data?.startable, true, 'the roster can say it can be started');
    assert.is((await consumer.roster()).find((r) => r.session === id)?.startable, true);

    const plain = await sendInstruction(consumer, { sender: 'alice' }, { session: id, text: 'hi', timeoutMs: 10_000 });
    assert.is(plain.outcome, 'rejected');
    assert.is(plain.outcome === 'rejected' ? plain.code : '', 'start-only');
    assert.is(stack.server.conversation(id)!.status, 'idle', 'nothing ran');

    const text = '[[TURN]] START-CANARY: write the release notes';
    const o = await sendInstruction(
      consumer,
      { sender: 'alice' },
      { session: id, text, idle: 'start', timeoutMs: 10_000 },
    );
    assert.is(o.outcome, 'delivered', JSON.stringify(o));
    if (o.outcome !== 'delivered') return;
    assert.is(o.started, true);
    assert.is(o.ref, `run:${id}:1`);
    await stack.server.until(id, 'finished');
    assert.ok(stack.model.modelRequests().some((r) => r.text.includes('START-CANARY')));
    const started = stack.session(id).filter((e) => e.type === 'run.started');
    assert.is(started.length, 1, 'one turn');
    assert.equal(stack.errors, []);
    assert.equal((await auditFiles([stack.logPath])).violations, []);
  } finally {
    await consumer.close();
    await stack.stop();
  }
});

test.run();
