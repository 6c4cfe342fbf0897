// The bench's stand-in qwen serve daemon (bench/servers/qwen-serve.ts) against the real serve
// lane: the lane finds its session, attaches, sees the turn start, and a steer is answered and
// receipted as the daemon does; with no turn running the steer is refused idle. If the lane's use
// of the daemon changes, the native-lane bench would time something else: this says so first.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { firstValueFrom, filter, type Subscription } from 'rxjs';
import { tsNode, type Child } from '../../bench/lib/proc.js';
import type { LaneFact } from '../../src/streams/lane.js';
import { qwenServeLane } from '../../src/adapters/qwen-code/serve/lane.js';

const S = 'stand-in-session';

test('the serve lane attaches to the stand-in, and a steer in its turn gets the receipt', async () => {
  const daemon: Child = await tsNode('servers/qwen-serve.ts', { sessions: [S] });
  const url = daemon.ready.url as string;
  const errors: string[] = [];
  const lane = qwenServeLane({ url, pollMs: 50, onError: (e) => errors.push(e.message) });
  const facts: LaneFact[] = [];
  const sub: Subscription = lane.facts$.subscribe((f) => facts.push(f));
  const next = (kind: LaneFact['kind']) => firstValueFrom(lane.facts$.pipe(filter((f) => f.kind === kind)));
  try {
    await next('attached');
    const idle = await lane.steer({ session: S, commandId: 'cmd-idle', text: 'too early' });
    assert.equal(idle.ok ? idle : idle.reason, 'idle', 'no turn yet: refused idle');
    const started = next('turn.started');
    await fetch(`${url}/bench/turn?session=${S}`, { method: 'POST' });
    await started;
    const delivered = next('delivered');
    const out = await lane.steer({ session: S, commandId: 'cmd-1', text: 'keep it small' });
    assert.equal(out, { ok: true, ref: 'cmd-1' });
    const d = await delivered;
    assert.equal([d.kind, d.kind === 'delivered' && d.commandId], ['delivered', 'cmd-1']);
    assert.equal(
      facts.map((f) => f.kind),
      ['attached', 'turn.started', 'delivered'],
    );
    assert.equal(errors, []);
  } finally {
    sub.unsubscribe();
    await lane.close();
    await daemon.stop();
  }
});

test.run();
