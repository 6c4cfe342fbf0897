// `aep-steer run`: a vendor with no native lane, no adapter set up, and no adapter answering each
// say what to do next and exit with their own code; nothing is started.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSecret } from '../../src/adapters/install.js';
import { RUN_EXIT, runVendor } from '../../src/cli/run-command.js';
import { adapterConfig, runAdapter } from '../../src/cli/adapter-command.js';
import { textSink } from '../support/tui.js';

const dirs: string[] = [];
const stateDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'aep-run-'));
  dirs.push(d);
  return d;
};
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('a vendor with no native lane is a usage error naming those that have one', async () => {
  const err = textSink();
  const code = await runVendor('qwen-code', [], {}, { err: err.stream }, { AEP_STATE_DIR: stateDir() });
  assert.is(code, RUN_EXIT.usage);
  assert.match(err.text(), 'run: qwen-code has no native lane to run on; `aep-steer run` takes claude-code, codex');
});

test('no adapter set up here: says how to start one', async () => {
  const err = textSink();
  const code = await runVendor('codex', [], {}, { err: err.stream }, { AEP_STATE_DIR: stateDir() });
  assert.is(code, RUN_EXIT.noAdapter);
  assert.match(err.text(), 'no codex adapter was set up here; start it first: `aep-steer adapter codex --instruct`');
});

test('no adapter answers on the port: says so and how to start it', async () => {
  const dir = stateDir();
  ensureSecret(undefined, { AEP_STATE_DIR: dir });
  // A port that was free a moment ago: nothing listens on it.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const err = textSink();
  const code = await runVendor('codex', [], { port: String(port) }, { err: err.stream }, { AEP_STATE_DIR: dir });
  assert.is(code, RUN_EXIT.noAdapter);
  assert.match(err.text(), `run: no adapter answers on 127.0.0.1:${port}`);
  assert.match(err.text(), 'start it first');
});

test('the adapter cannot start its app-server: lane-unavailable, said with the reason, nothing else runs', async () => {
  const dir = stateDir();
  const env = { AEP_STATE_DIR: dir, PATH: join(dir, 'no-bin') };
  const cfg = adapterConfig('codex', { port: '0', relay: false, instruct: true, log: join(dir, 'a.jsonl') }, env);
  const errors: string[] = [];
  const running = await runAdapter(cfg, (e) => errors.push(e.message));
  try {
    const err = textSink();
    const port = String(running.adapter.port);
    const code = await runVendor('codex', [], { port }, { err: err.stream }, env);
    assert.is(code, RUN_EXIT.laneFailed, err.text());
    assert.match(err.text(), 'run: the adapter could not start its app-server: ');
    assert.match(err.text(), 'cannot run codex');
    assert.match(err.text(), 'AEP_CODEX_BIN');
  } finally {
    await running.close();
  }
});

test.run();
