// The Claude Code table's spawn (D45) with a stand-in CLI: the worker runs in the spawn's
// directory with the session id the launcher chose, stream-json, the permission mode from the
// adapter's environment (acceptEdits unless set); its first line on stdin is the prompt under the
// spawn command's message uuid; what it prints reaches the adapter's lane; a stop ends it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeStreamJson } from '../../../src/adapters/claude-code/stream-json/spec.js';
import { uuidFor } from '../../../src/adapters/claude-code/stream-json/stream.js';
import { until } from '../../support/until.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-claude-spawn-'));
const sock = join(dir, 'lane.sock');
const fake = join(dir, 'claude');
// Records its arguments and directory, prints an init line, keeps its first input line, then
// reads on until its input ends.
writeFileSync(
  fake,
  `#!/bin/sh\nout="${dir}/run-$$"\nprintf '%s\\n' "$@" > "$out.args"\npwd > "$out.cwd"\necho '{"type":"system","subtype":"init"}'\nhead -n 1 > "$out.first"\ncat > /dev/null\n`,
);
chmodSync(fake, 0o755);

let lane = '';
let server: Server;
test.before(async () => {
  server = createServer((c) => c.on('data', (d: Buffer) => (lane += d.toString())));
  await new Promise<void>((r) => server.listen(sock, r));
});
test.after(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const runFiles = (ext: string): string[] =>
  readdirSync(dir)
    .filter((n) => n.startsWith('run-') && n.endsWith(ext))
    .map((n) => join(dir, n));

test('a worker: its own session id, the cwd, stream-json, acceptEdits by default; prompt first; stop ends it', async () => {
  const launch = await claudeStreamJson.spawn!({ AEP_CLAUDE_BIN: fake, PATH: process.env.PATH }, dir, async () => ({
    address: sock,
  }));
  const w = await launch({ cwd: dir, prompt: 'do the work', commandId: 'CMD1' });
  await until(() => runFiles('.first').some((f) => readFileSync(f, 'utf8').length > 0), 'the first input line');
  const args = readFileSync(runFiles('.args')[0]!, 'utf8').trim().split('\n');
  assert.ok(args.includes('-p'));
  assert.is(args[args.indexOf('--session-id') + 1], w.session);
  assert.match(w.session, /^[0-9a-f]{8}-[0-9a-f]{4}-4/);
  assert.is(args[args.indexOf('--input-format') + 1], 'stream-json');
  assert.is(args[args.indexOf('--permission-mode') + 1], 'acceptEdits');
  assert.is(readFileSync(runFiles('.cwd')[0]!, 'utf8').trim(), dir);
  const first = JSON.parse(readFileSync(runFiles('.first')[0]!, 'utf8')) as Record<string, unknown>;
  assert.equal(
    [first.type, first.uuid, (first.message as { content?: string }).content],
    ['user', uuidFor('CMD1'), 'do the work'],
  );
  await until(() => lane.includes('"subtype":"init"'), "the worker's output on the lane");
  await w.stop();
  await w.ended;
  for (const f of runFiles('')) rmSync(f);
});

test("the permission mode comes from the adapter's environment; a missing CLI is said, with the variable to set", async () => {
  const launch = await claudeStreamJson.spawn!(
    { AEP_CLAUDE_BIN: fake, PATH: process.env.PATH, AEP_CLAUDE_SPAWN_PERMISSION_MODE: 'plan' },
    dir,
    async () => ({ address: sock }),
  );
  const w = await launch({ cwd: dir, prompt: 'p', commandId: 'CMD2' });
  await until(
    () => runFiles('.args').length > 0 && readFileSync(runFiles('.args')[0]!, 'utf8').includes('plan'),
    'args',
  );
  await w.stop();
  const missing = await claudeStreamJson.spawn!({ AEP_CLAUDE_BIN: join(dir, 'nope') }, dir, async () => ({
    address: sock,
  }));
  const why = await missing({ cwd: dir, prompt: 'p', commandId: 'CMD3' }).then(
    () => 'started',
    (err: Error) => err.message,
  );
  assert.match(why, /cannot run .*AEP_CLAUDE_BIN/);
  assert.ok(existsSync(dir));
});

test.run();
