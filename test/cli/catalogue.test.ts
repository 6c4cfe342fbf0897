// The command line: usage errors exit 2 naming the option, and `--version` / `--help` load none of
// the heavy modules (relay, store, machines, sockets), only the command that runs is imported.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOGUE, commandNamed } from '../../src/cli/catalogue.js';
import { USAGE_EXIT, VERSION } from '../../src/cli/usage.js';
import { projectRoot } from '../support/shared-dir.js';

const BIN = join(projectRoot, 'bin', 'aep-steer.js');
const dir = mkdtempSync(join(tmpdir(), 'aep-catalogue-'));
// A module hook that records every module the process resolves. It runs on the hooks thread, whose
// asynchronous stderr writes can be lost when the process exits, so it appends to a file at once.
const hooks = join(dir, 'hooks.mjs');
writeFileSync(
  hooks,
  `import { appendFileSync } from 'node:fs';
export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(process.env.AEP_TEST_LOADS, r.url + '\\n'); return r; }\n`,
);
const register = join(dir, 'register.mjs');
writeFileSync(register, `import { register } from 'node:module'; register(${JSON.stringify(`file://${hooks}`)});\n`);

let runs = 0;
const run = (args: string[]) => {
  const loads = join(dir, `loads-${++runs}.txt`);
  writeFileSync(loads, '');
  const env = { ...process.env, AEP_STATE_DIR: dir, AEP_TEST_LOADS: loads };
  return { ...spawnSync(process.execPath, ['--import', register, BIN, ...args], { encoding: 'utf8', env }), loads };
};
const loaded = (r: { loads: string }) => readFileSync(r.loads, 'utf8').split('\n').filter(Boolean);
const HEAVY =
  /node_modules\/(ws|xstate|rxjs|ajv|@modelcontextprotocol|@nats-io)\/|\/dist\/(relay|streams|machines|consumer)\//;

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('--version and --help load nothing heavy', () => {
  for (const args of [['--version'], ['--help'], []]) {
    const r = run(args);
    assert.ok(r.status === (args.length === 0 ? USAGE_EXIT : 0), `${args.join(' ')}: exit ${r.status} ${r.stderr}`);
    const heavy = loaded(r).filter((u) => HEAVY.test(u));
    assert.equal(heavy, [], `aep-steer ${args.join(' ')} loaded ${heavy.join(', ')}`);
  }
  assert.is(run(['--version']).stdout.trim(), VERSION);
  assert.is(VERSION, JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).version);
});

test('a command loads its own module and not the others', () => {
  const r = run(['doctor', '--help']);
  assert.is(r.status, 0, r.stderr);
  const urls = loaded(r);
  assert.ok(urls.some((u) => u.endsWith('/dist/cli/doctor-command.js')));
  assert.not.ok(
    urls.some((u) => /\/dist\/cli\/(instruct|watch|demo|mcp|relay)-command\.js$/.test(u)),
    'no other command module',
  );
});

test('usage errors exit 2 and name what is wrong', () => {
  const unknown = run(['instruct', '--session', 's', '--bogus']);
  assert.is(unknown.status, USAGE_EXIT);
  assert.match(unknown.stderr, "error: unknown option '--bogus'");
  const missing = run(['instruct', 'text']);
  assert.is(missing.status, USAGE_EXIT);
  assert.match(missing.stderr, "error: required option '--session <id>' not specified");
  const command = run(['instrcut']);
  assert.is(command.status, USAGE_EXIT);
  assert.match(command.stderr, "error: unknown command 'instrcut'");
  assert.match(command.stderr, '(Did you mean instruct?)');
});

test('the catalogue names every command once; help <command> finds it', () => {
  const names = CATALOGUE.map((c) => c.name);
  assert.equal(names.length, new Set(names).size);
  assert.is(commandNamed(['help', 'watch']), 'watch');
  assert.is(commandNamed(['--json', 'sessions']), 'sessions');
  assert.is(commandNamed([]), undefined);
});

test.run();
