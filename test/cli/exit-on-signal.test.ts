import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';

// A child that serves nothing: `close` settles as its argument says (ok, fail, or never), and it
// says `ready` once the handlers are in place.
const CHILD = `
import { exitOnSignal } from ${JSON.stringify(join(projectRoot, 'src/cli/exit-on-signal.ts'))};
const how = process.argv.at(-1);
const close = () =>
  how === 'ok' ? Promise.resolve() : how === 'fail' ? Promise.reject(new Error('x')) : new Promise(() => {});
exitOnSignal(close, how === 'never' ? 50 : undefined);
setInterval(() => {}, 60_000);
process.stdout.write('ready\\n');
`;

async function exitAfter(signal: NodeJS.Signals, how: 'ok' | 'fail' | 'never'): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD, how], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.includes('ready') && resolve()));
  child.kill(signal);
  return exit;
}

test('SIGTERM closes and exits 0; SIGINT likewise', async () => {
  assert.is(await exitAfter('SIGTERM', 'ok'), 0);
  assert.is(await exitAfter('SIGINT', 'ok'), 0);
});

test('a close that fails exits 1', async () => {
  assert.is(await exitAfter('SIGTERM', 'fail'), 1);
});

test('a close that outlasts its grace exits 1', async () => {
  assert.is(await exitAfter('SIGTERM', 'never'), 1);
});

test.run();
