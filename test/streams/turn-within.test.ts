// Cline 3.0.65 runs TaskStart detached and PreToolUse blocking: on a loaded host PreToolUse was
// seen to reach the adapter 180 ms before TaskStart, and send_input / control.cancel were then
// refused as if the session were idle. A moment that fires only within a turn (the table's
// `turn: 'within'`) marks the turn open; the late TaskStart still opens the run; TaskComplete
// closes the turn as before. Real Cline hook inputs, the real Cline table, the real runtime.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { cline } from '../../src/adapters/cline/table.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { command } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import type { Lane, LaneFact, LaneOutcome, LaneRequest } from '../../src/streams/lane.js';
import { adapter } from '../support/adapter.js';
import { readJson, referenceFile } from '../support/shared-dir.js';

const samples = readJson<Record<string, Record<string, unknown>>>(referenceFile('samples', 'cline-3.0.65.json'));
const S = (samples.PreToolUse!.sessionContext as { rootSessionId: string }).rootSessionId;
const TYPE = 'x.cline.control.send_input';

class HubStandIn implements Lane {
  readonly name = 'hub';
  readonly deliveries = [];
  readonly how = 'run Cline with its hub';
  readonly sent: LaneRequest[] = [];
  readonly facts = new Subject<LaneFact>();
  readonly facts$ = this.facts.asObservable();
  reaches(): boolean {
    return true;
  }
  async send(req: LaneRequest): Promise<LaneOutcome> {
    this.sent.push(req);
    return { ok: true };
  }
  async close(): Promise<void> {}
}

const sendInput = (id: string, text: string) =>
  command({ agent: 'tester', host: 'test-host' }, S, {
    type: TYPE,
    id,
    data: { text, delivery: 'steer' },
    capture: 'redacted',
  });

test('PreToolUse before a late TaskStart: the turn is open, send_input is taken; TaskComplete closes it again', async () => {
  const transport = new HubStandIn();
  const a = await adapter({ surface: surfaceFrom(cline), lanes: [transport], sendInput: true, instruct: true });
  try {
    await a.post(samples.PreToolUse!);
    const settled = a.next(
      (e) => e.cause === 'c1' && (e.type === 'x.cline.input.sent' || e.type === 'control.rejected'),
    );
    a.handle.command(sendInput('c1', 'prefer the small fix'));
    const first = await settled;
    assert.is(first.type, 'x.cline.input.sent', JSON.stringify(first.data));
    assert.equal(first.data, { delivery: 'steer' });
    assert.equal(
      transport.sent.map((r) => r.commandId),
      ['c1'],
    );
    // The detached TaskStart lands now: it opens the run (adapter-minted id) and the turn stays open.
    await a.post(samples.TaskStart!);
    const run = a.events.find((e) => e.type === 'run.started' && e.session === S);
    assert.ok(run?.run?.startsWith('run_'), 'the late TaskStart still opens the run');
    await a.post(samples.PostToolUse!);
    const sent2 = a.next((e) => e.type === 'x.cline.input.sent' && e.cause === 'c2');
    a.handle.command(sendInput('c2', 'then run lint'));
    await sent2;
    await a.post(samples.TaskComplete!);
    const idle = a.next((e) => e.type === 'control.rejected' && e.cause === 'c3');
    a.handle.command(sendInput('c3', 'after the turn'));
    assert.equal((await idle).data, {
      reason: 'refused',
      detail: 'session idle: send_input would start a turn; send it while the agent is working',
    });
  } finally {
    await a.handle.close();
  }
  assert.equal((await auditFiles([a.logPath])).violations, []);
});

test.run();
