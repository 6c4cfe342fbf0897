// D33 told truly, through the real adapter runtime with the real vendor tables and a stand-in
// native lane (events in, events out): a cancel's `run.cancelled` names the run the turn's
// `run.started` named (the vendor's own id: Codex turn_id, Claude Code prompt_id), whichever of
// the interrupt's answer and the turn's end comes first; a tool process the vendor left running
// is said on it (`left_running`, its command redacted-class); `kill_tools` reaches the lane, and
// what it ended is said as `killed`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { codex } from '../../src/adapters/codex/table.js';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import type { VendorTable } from '../../src/adapters/table.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { command, type AepEvent } from '../../src/protocol/index.js';
import { downLevel } from '../../src/protocol/capture.js';
import type { LaneFact, SteeringLane } from '../../src/streams/lane.js';
import type { ToolsAtStop } from '../../src/machines/session-context.js';
import { adapter, type TestAdapter } from '../support/adapter.js';
import { readJson, referenceFile } from '../support/shared-dir.js';

/** A cancel's stop as the stream says it: by control, decided by its sender from a command line (D46). */
const CONTROL = { by: 'control', decided_by: { identity: 'tester', surface: 'cli' } };

type Input = Record<string, unknown>;
const codexSamples = readJson<Record<string, Input>>(referenceFile('samples', 'codex-0.171.0.json'));
const claudeSamples = readJson<Record<string, Input>>(referenceFile('samples', 'claude-code-2.1.332.json'));

/** A lane that reaches every session it is told of and answers interrupts as the test says. */
class StandInLane implements SteeringLane {
  readonly name = 'app-server';
  readonly deliveries = ['steer'];
  readonly how = 'start it with `aep-steer run codex`';
  readonly facts = new Subject<LaneFact>();
  readonly facts$ = this.facts.asObservable();
  readonly interrupts: { session: string; killTools?: boolean }[] = [];
  /** The turn's end the vendor reports after an interrupt, and whether it comes before the answer. */
  constructor(
    private readonly end: ToolsAtStop,
    private readonly endFirst: boolean,
  ) {}
  private readonly reached = new Set<string>();
  reaches = (s: string): boolean => this.reached.has(s);
  attach(session: string): void {
    this.reached.add(session);
    this.facts.next({ kind: 'attached', session, at: Date.now() });
    this.facts.next({ kind: 'turn.started', session, at: Date.now(), turnId: 't' });
  }
  async steer() {
    return { ok: false as const, reason: 'refused' as const, detail: 'not in this test' };
  }
  private ended(session: string): void {
    this.facts.next({
      kind: 'turn.ended',
      session,
      at: Date.now(),
      turnId: 't',
      status: 'interrupted',
      interrupted: true,
      ...this.end,
    });
  }
  async interrupt(session: string, o?: { killTools?: boolean }) {
    this.interrupts.push({ session, ...(o?.killTools === undefined ? {} : { killTools: o.killTools }) });
    if (this.endFirst) this.ended(session);
    else setImmediate(() => this.ended(session));
    return { ok: true as const };
  }
  async close() {
    this.facts.complete();
  }
}

/** The event, whether it went out already or comes later. */
const seen = (a: TestAdapter, pred: (e: AepEvent) => boolean): Promise<AepEvent> => {
  const now = a.events.find(pred);
  return now === undefined ? a.next(pred) : Promise.resolve(now);
};

async function turnOnLane(table: VendorTable, lane: StandInLane, samples: Record<string, Input>) {
  const a = await adapter({ surface: surfaceFrom(table), lanes: [lane] });
  await a.post(samples.SessionStart!);
  const session = String(samples.SessionStart!.session_id);
  lane.attach(session);
  await seen(a, (e) => e.type === `x.${table.token}.session.described` && JSON.stringify(e.data).includes(lane.name));
  await a.post(samples.UserPromptSubmit!);
  const started = a.events.find((e) => e.type === 'run.started' && e.session === session);
  assert.ok(started?.run, 'the turn started a run that names the vendor id');
  return { a, session, started: started! };
}

async function cancel(a: TestAdapter, session: string, data: Record<string, unknown>): Promise<AepEvent> {
  const cmd = command({ agent: 'tester', host: 'test-host' }, session, { type: 'control.cancel', data });
  a.handle.command(cmd);
  return seen(a, (e) => e.type === 'run.cancelled' && e.cause === cmd.id);
}

for (const [name, table, samples, field] of [
  ['Codex', codex, codexSamples, 'turn_id'],
  ['Claude Code', claudeCode, claudeSamples, 'prompt_id'],
] as const) {
  for (const endFirst of [false, true]) {
    test(`${name}: run.cancelled names the run run.started named (${field}), the turn's end ${endFirst ? 'before' : 'after'} the interrupt's answer`, async () => {
      const lane = new StandInLane({}, endFirst);
      const { a, session, started } = await turnOnLane(table, lane, samples);
      try {
        assert.is(started.run, String(samples.UserPromptSubmit![field]));
        const cancelled = await cancel(a, session, { scope: 'run' });
        assert.is(cancelled.run, started.run, 'the terminal pairs with its start by run (AEP-0002 §2.1)');
        assert.equal(cancelled.data, CONTROL, 'nothing was left running, and nothing is said to be');
        assert.equal(lane.interrupts, [{ session }], 'no kill asked');
      } finally {
        await a.handle.close();
      }
    });
  }
}

test('a tool process the vendor left running is said on run.cancelled, its command redacted-class', async () => {
  const command = "/bin/bash -lc 'sleep 600'";
  const lane = new StandInLane({ leftRunning: [{ pid: 4242, command }] }, false);
  const { a, session, started } = await turnOnLane(codex, lane, codexSamples);
  try {
    const cancelled = await cancel(a, session, { scope: 'run' });
    assert.is(cancelled.run, started.run);
    assert.equal(cancelled.data, { ...CONTROL, left_running: [{ pid: 4242, command }] });
    assert.is(cancelled.capture, 'redacted');
    // A metadata watcher learns that a process was left, and its pid, never the command line.
    assert.equal(downLevel(cancelled, 'metadata').data, { ...CONTROL, left_running: [{ pid: 4242 }] });
  } finally {
    await a.handle.close();
  }
});

test('kill_tools reaches the lane; what it ended is said as killed, what it could not as left_running', async () => {
  const lane = new StandInLane(
    { killed: [{ pid: 11, command: 'make test' }], leftRunning: [{ command: 'npm run watch' }] },
    true,
  );
  const { a, session } = await turnOnLane(codex, lane, codexSamples);
  try {
    const cancelled = await cancel(a, session, { scope: 'run', kill_tools: true });
    assert.equal(lane.interrupts, [{ session, killTools: true }]);
    assert.equal(cancelled.data, {
      ...CONTROL,
      left_running: [{ command: 'npm run watch' }],
      killed: [{ pid: 11, command: 'make test' }],
    });
  } finally {
    await a.handle.close();
  }
});

test.run();
