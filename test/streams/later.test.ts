// D45: a hook whose observations are read a moment after it (the table's `later`) is stepped at
// once without them, and they follow as an observation-only moment, answered already, once read;
// the same session's hooks after it wait behind that read, in order, while other sessions' hooks
// go on at once; a read that fails gives the hook's own observations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { laterObservations } from '../../src/streams/later.js';
import type { SessionItem } from '../../src/streams/step-types.js';
import type { ObservationSpec } from '../../src/streams/surface.js';

type HookStep = SessionItem & { kind: 'hook' };

const item = (session: string, event: string, later?: () => Promise<ObservationSpec[]>): HookStep => ({
  kind: 'hook',
  session,
  hookId: `${session}-${event}`,
  at: 0,
  hook: {
    session,
    event,
    class: { kind: 'moment', eligible: false },
    observations: [{ type: `${event}.own` }],
    ...(later === undefined ? {} : { later }),
  },
});

/** A read the test lets finish. */
function gate(): { read: () => Promise<ObservationSpec[]>; finish: (o: ObservationSpec[]) => void; fail: () => void } {
  let finish!: (o: ObservationSpec[]) => void;
  let fail!: () => void;
  const p = new Promise<ObservationSpec[]>((res, rej) => {
    finish = res;
    fail = () => rej(new Error('unreadable'));
  });
  return { read: () => p, finish, fail };
}

const seen = (out: HookStep[]) =>
  out.map(
    (h) => `${h.hookId.startsWith(h.session) ? h.hookId : 'later'}:${h.hook.observations.map((o) => o.type).join(',')}`,
  );
const settle = () => new Promise((r) => setImmediate(r));

test("the hook goes at once; what is read follows it; the same session's next hooks wait, another's go on", async () => {
  const in$ = new Subject<HookStep>();
  const out: HookStep[] = [];
  in$.pipe(laterObservations()).subscribe((h) => out.push(h));
  const g = gate();
  in$.next(item('a', 'stop', g.read));
  in$.next(item('a', 'end'));
  in$.next(item('b', 'tool'));
  assert.equal(seen(out), ['a-stop:', 'b-tool:tool.own'], 'the hook without its observations; the other session');
  assert.is(out[0]!.hook.later, undefined, 'the step gets no reader to run');
  g.finish([{ type: 'run.finished', data: { summary: 'answer' } }]);
  await settle();
  assert.equal(seen(out), ['a-stop:', 'b-tool:tool.own', 'later:run.finished', 'a-end:end.own']);
  const follow = out[2]!;
  assert.equal(
    [follow.session, follow.answered, follow.hook.event, follow.hook.class],
    ['a', 'neutral', 'stop', { kind: 'moment', eligible: false, reason: 'what the vendor wrote after the hook' }],
  );
  in$.next(item('a', 'next'));
  assert.is(seen(out).at(-1), 'a-next:next.own', 'once read, the session is stepped at once again');
});

test("a read that fails gives the hook's own observations", async () => {
  const in$ = new Subject<HookStep>();
  const out: HookStep[] = [];
  in$.pipe(laterObservations()).subscribe((h) => out.push(h));
  const g = gate();
  in$.next(item('a', 'stop', g.read));
  g.fail();
  await settle();
  assert.equal(seen(out), ['a-stop:', 'later:stop.own']);
});

test.run();
