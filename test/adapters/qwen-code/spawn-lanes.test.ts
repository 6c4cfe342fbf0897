// D45: the serve lane of a Qwen Code adapter that spawns follows the daemon the person attached and
// each worker's own daemon under one name. A call goes to the daemon that hosts its session; a
// worker daemon's loss detaches that worker's sessions only; following one stops once, closing it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { QwenServeLanes } from '../../../src/adapters/qwen-code/spawn-lanes.js';
import type { LaneFact, LaneRequest, SteeringLane } from '../../../src/streams/lane.js';

/** A daemon's lane that hosts the sessions it was told about. */
function fakeLane(url: string) {
  const facts = new Subject<LaneFact>();
  const hosts = new Set<string>();
  let closed = 0;
  const lane: SteeringLane = {
    name: 'serve',
    deliveries: ['steer', 'queue'],
    keepsUnread: true,
    how: `host it on ${url}`,
    facts$: facts,
    reaches: (s) => hosts.has(s),
    steer: async (req: LaneRequest) => ({ ok: true, ref: `${url}:${req.session}` }),
    interrupt: async () => ({ ok: true }),
    async close() {
      closed += 1;
      facts.complete();
    },
  };
  const attach = (session: string) => {
    hosts.add(session);
    facts.next({ kind: 'attached', session, at: 1 });
  };
  return { lane, facts, attach, closed: () => closed };
}

const req = (session: string): LaneRequest => ({ session, commandId: 'C1', text: 'go' });

test("calls go to the daemon hosting the session; the person's traits are the lane's", async () => {
  const person = fakeLane('person');
  const made = new Map<string, ReturnType<typeof fakeLane>>();
  const lanes = new QwenServeLanes(person.lane, (url) => {
    const l = fakeLane(url);
    made.set(url, l);
    return l.lane;
  });
  const seen: LaneFact[] = [];
  const sub = lanes.facts$.subscribe((f) => seen.push(f));
  assert.equal(lanes.deliveries, ['steer', 'queue']);
  assert.is(lanes.how, 'host it on person');
  assert.is(lanes.keepsUnread, true);
  person.attach('p-1');
  lanes.follow('w1', '/t1');
  made.get('w1')!.attach('w-1');
  assert.equal(await lanes.steer(req('w-1')), { ok: true, ref: 'w1:w-1' });
  assert.equal(await lanes.steer(req('p-1')), { ok: true, ref: 'person:p-1' });
  assert.ok(lanes.reaches('w-1') && lanes.reaches('p-1'));
  assert.not.ok(lanes.reaches('nobody'));
  assert.equal(
    seen.map((f) => (f.kind === 'attached' ? f.session : f.kind)),
    ['p-1', 'w-1'],
  );
  sub.unsubscribe();
  await lanes.close();
  assert.is(person.closed(), 1);
});

test("a worker daemon's loss detaches its own sessions only; following stops once", async () => {
  const made = new Map<string, ReturnType<typeof fakeLane>>();
  const lanes = new QwenServeLanes(undefined, (url) => {
    const l = fakeLane(url);
    made.set(url, l);
    return l.lane;
  });
  const seen: LaneFact[] = [];
  lanes.facts$.subscribe((f) => seen.push(f));
  const stop1 = lanes.follow('w1', '/t1');
  lanes.follow('w2', '/t2');
  made.get('w1')!.attach('w-1');
  made.get('w2')!.attach('w-2');
  made.get('w1')!.facts.next({ kind: 'lost', at: 5, detail: 'the daemon is gone' });
  assert.equal(seen.at(-1), { kind: 'detached', session: 'w-1', at: 5, detail: 'the daemon is gone' });
  assert.not.ok(
    seen.some((f) => f.kind === 'lost'),
    'no loss of the whole lane',
  );
  assert.not.ok(seen.some((f) => f.kind === 'detached' && f.session === 'w-2'));
  await Promise.all([stop1(), stop1()]);
  assert.is(made.get('w1')!.closed(), 1);
  // With no daemon hosting it, a call says so instead of throwing.
  const out = await lanes.steer(req('w-9'));
  assert.equal(out.ok, false);
  await lanes.close();
  assert.is(made.get('w2')!.closed(), 1);
});

test.run();
