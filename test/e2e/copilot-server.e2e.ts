// D50 on the real GitHub Copilot CLI 1.0.102 against the loopback mock model (BYOK, no GitHub
// login): `aep-steer run copilot`'s run hosts a session on the headless server and joins the
// adapter's server lane. While the turn's slow shell call runs: a withdrawn queue never reaches
// the model, a steer lands in the same turn's next request, a queue in the first request of the
// next turn (the steer's receipt names the shell command it moved to the background); then a start
// on idle opens a turn, and a cancel stops a turn at once. Every
// permission the server asks is a held request, answered through the lane.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ReplaySubject, filter, firstValueFrom } from 'rxjs';
import { copilotServerLane } from '../../src/adapters/copilot/server/lane.js';
import { runCopilot } from '../../src/adapters/copilot/server/run.js';
import type { LaneFact } from '../../src/streams/lane.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { vendorBinary, vendorMissing } from '../support/vendor-e2e.js';

const bin = vendorBinary('copilot');

/** Polls a condition the test is waiting for (a request the mock recorded), never a fixed time. */
async function until(what: string, ok: () => boolean, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

if (!vendorMissing(bin, 'copilot-server', 'scripts/install-vendor-cli.sh copilot')) {
  let root = '';
  let mock: MockOpenAi;
  test.before(async () => {
    root = mkdtempSync(join(tmpdir(), 'aep-copilot-e2e-'));
    mkdirSync(join(root, 'home'));
    mkdirSync(join(root, 'proj'));
    mock = await startMockOpenAi();
  });
  test.after(async () => {
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('steer, queue, withdraw, start and cancel through the headless server, each receipted', async () => {
    const lane = copilotServerLane({ socketPath: join(root, 'state', 'copilot', 'server.sock') });
    const facts = new ReplaySubject<LaneFact>();
    const seen: LaneFact[] = [];
    lane.facts$.subscribe(facts);
    lane.facts$.subscribe((f) => {
      seen.push(f);
      // Every permission the server asks is held on the lane; here the answer is yes.
      if (f.kind === 'approval') void lane.answer!(f.session, f.approvalId, true);
    });
    const fact = (m: (f: LaneFact) => boolean) => firstValueFrom(facts.pipe(filter(m)));
    const opened = await lane.open!();
    const stdin = new PassThrough();
    const out = new PassThrough();
    let printed = '';
    out.on('data', (d: Buffer) => (printed += d.toString()));
    const env = {
      PATH: process.env.PATH,
      HOME: join(root, 'home'),
      TERM: 'dumb',
      NO_COLOR: '1',
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: mock.baseUrl,
      COPILOT_PROVIDER_API_KEY: 'sk-mock',
      COPILOT_MODEL: 'mock-model',
    };
    const gate = join(root, 'gate-1');
    const done = runCopilot(
      bin!,
      ['-p', `[[TURN]] [[WAITFILE:${gate}]] run the slow command`],
      String(opened.address),
      join(root, 'proj'),
      env,
      { in: stdin, out, err: process.stderr },
    );
    const attached = await fact((f) => f.kind === 'attached');
    const session = attached.kind === 'attached' ? attached.session : '';
    await fact((f) => f.kind === 'approval.resolved');
    const withdrawn = await lane.queue!({ session, commandId: 'c-w', text: 'WITHDRAWN-MARK' });
    assert.ok(withdrawn.ok, JSON.stringify(withdrawn));
    assert.equal(await lane.withdraw!({ session, commandId: 'c-w' }), { removed: true });
    assert.ok((await lane.queue!({ session, commandId: 'c-q', text: 'QUEUE-MARK' })).ok);
    assert.ok((await lane.steer({ session, commandId: 'c-s', text: 'STEER-MARK' })).ok);
    const steered = await fact((f) => f.kind === 'delivered' && f.commandId === 'c-s');
    // D50: the immediate send moved the running slow shell command to the background, and says so.
    assert.ok(
      steered.kind === 'delivered' && steered.backgrounded?.command.includes(gate) === true,
      `the steer's receipt names the command it moved to the background: ${JSON.stringify(steered)}`,
    );
    writeFileSync(gate, '');
    await fact((f) => f.kind === 'delivered' && f.commandId === 'c-q');
    await fact((f) => f.kind === 'turn.ended');

    const texts = () => mock.modelRequests().map((r) => r.text);
    const steerAt = texts().findIndex((t) => t.includes('STEER-MARK'));
    const queueAt = texts().findIndex((t) => t.includes('QUEUE-MARK'));
    assert.ok(steerAt > 0, 'the steer reached the model');
    // Same turn: the steered request carries the first request's tool call and its result.
    assert.ok(texts()[steerAt]!.includes('"role":"tool"'), 'the steer came after the slow call, in its turn');
    assert.ok(queueAt > steerAt, 'the queue waited for the next turn');
    assert.not.ok(
      texts().some((t) => t.includes('WITHDRAWN-MARK')),
      'a withdrawn instruction never reaches the model',
    );
    assert.ok(printed.includes('"delivery":"steering"') && printed.includes('"delivery":"queued"'));

    // Start on idle (D43): the instruction opens a turn of its own.
    const start = await lane.startTurn!({ session, commandId: 'c-t', text: 'START-MARK', otherwise: 'queue' });
    assert.ok(start.ok);
    const began = await fact((f) => f.kind === 'delivered' && f.commandId === 'c-t');
    assert.ok(began.kind === 'delivered' && began.started === true);
    await until('the start reached the model', () => texts().some((t) => t.includes('START-MARK')));
    await fact((f) => f.kind === 'turn.ended' && f.turnId.endsWith(':2'));

    // Cancel: a turn held on its slow call stops at once; no request follows the abort.
    const gate2 = join(root, 'gate-2');
    await lane.startTurn!({
      session,
      commandId: 'c-c',
      text: `[[TURN]] [[WAITFILE:${gate2}]] again`,
      otherwise: 'queue',
    });
    await until(
      'the second slow call was approved',
      () => seen.filter((f) => f.kind === 'approval.resolved').length >= 2,
    );
    const before = mock.modelRequests().length;
    assert.equal(await lane.interrupt!(session), { ok: true });
    const end = await fact((f) => f.kind === 'turn.ended' && f.turnId.endsWith(':3'));
    assert.ok(end.kind === 'turn.ended' && end.interrupted);
    assert.is(mock.modelRequests().length, before, 'no model request after the cancel');
    writeFileSync(gate2, '');

    stdin.end();
    assert.is(await done, 0);
    await fact((f) => f.kind === 'detached');
    await lane.close();
  });
}

test.run();
