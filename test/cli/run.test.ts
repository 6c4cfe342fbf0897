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
  const code = await runVendor('claude-code', [], {}, { err: err.stream }, { AEP_STATE_DIR: stateDir() });
  assert.is(code, RUN_EXIT.usage);
  assert.match(err.text(), 'run: claude-code has no native lane to run on; `aep-steer run` takes codex');
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

test.run();
