// A vendor's own adapter flags are rows of its table (D16: each with its variable), declared in
// its folder and read the same way for every vendor: `aep-steer adapter` names none of them, a
// flag shared by several vendors is one flag whose help names each, and a flag the chosen vendor
// lacks is refused naming the vendors that take it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { vendorTables } from '../../src/adapters/registry.js';
import { adapterOptions, flagName, optionKey, vendorSettings } from '../../src/adapters/vendor-settings.js';
import { SWITCHES, type VendorTable } from '../../src/adapters/table.js';
import { registerAdapter } from '../../src/cli/adapter-command.js';
import { projectRoot } from '../support/shared-dir.js';

const tables = [...vendorTables.values()];
const table = (token: string): VendorTable => vendorTables.get(token)!;

test('every row names its variable, takes a value exactly when its target does, and sets a way in its table has', () => {
  const envs = new Set<string>();
  for (const t of tables) {
    for (const o of t.options ?? []) {
      const what = `${t.token} ${o.flag}`;
      assert.match(o.flag, /^--[a-z][a-z-]*( <[^>]+>)?$/, what);
      assert.is(o.flag.includes(' <'), !SWITCHES.has(o.sets), `${what}: a switch has no value, a value target one`);
      assert.match(o.env, /^AEP_[A-Z_]+$/, what);
      assert.not.ok(envs.has(o.env), `${what}: ${o.env} is another row's variable`);
      envs.add(o.env);
      if (o.sets.startsWith('user-plane')) assert.ok(t.userPlane !== undefined, `${what}: the table has no user plane`);
      if (o.sets.startsWith('source-')) assert.ok(t.source !== undefined, `${what}: the table has no source`);
      if (o.sets.startsWith('lane-'))
        assert.ok(
          t.lanes?.some((l) => l.joins === 'attached'),
          `${what}: the table attaches no lane`,
        );
    }
    const sets = new Set((t.options ?? []).map((o) => o.sets));
    if (t.source !== undefined) assert.ok(sets.has('source-url') && sets.has('source-poll'), t.token);
    if (t.userPlane !== undefined) assert.ok(sets.has('user-plane') && sets.has('user-plane-control'), t.token);
    if (t.lanes?.some((l) => l.joins === 'attached')) assert.ok(sets.has('lane-url'), t.token);
  }
});

test('a flag several vendors take is one flag, spelled alike, whose help names each vendor with its variable', () => {
  const flags = adapterOptions(tables);
  const names = flags.map((f) => f.flag.split(' ')[0]);
  assert.equal(names.length, new Set(names).size, 'one entry per flag');
  for (const t of tables)
    for (const o of t.options ?? [])
      assert.is(flags.find((f) => f.flag.split(' ')[0] === flagName(o))?.flag, o.flag, `${t.token} ${o.flag}`);
  const control = flags.find((f) => f.flag === '--control')!;
  for (const part of [
    'vscode (AEP_VSCODE_CONTROL=1): ',
    'hermes (AEP_HERMES_CONTROL=1): ',
    'openhands (AEP_OPENHANDS_CONTROL=1): ',
  ])
    assert.ok(control.help.includes(part), control.help);
  assert.ok(flags.find((f) => f.flag === '--poll <seconds>')?.help.includes('default 15'));
});

test('the adapter command registers every vendor flag from the rows and names none itself', () => {
  const program = new Command('aep-steer');
  registerAdapter(program);
  const longs = program.commands[0]!.options.map((o) => o.long);
  const vendor = adapterOptions(tables).map((f) => f.flag.split(' ')[0]);
  for (const flag of vendor) assert.ok(longs.includes(flag), flag);
  const source = readFileSync(join(projectRoot, 'src', 'cli', 'adapter-command.ts'), 'utf8');
  for (const flag of vendor) assert.not.ok(source.includes(`'${flag}`), `adapter-command.ts spells ${flag}`);
});

test('flags over variables over defaults; a switch is on by its flag or its variable', () => {
  const oh = table('openhands');
  const byDefault = vendorSettings(oh, {}, {}, tables);
  assert.equal(
    [byDefault.source?.url, byDefault.source?.pollMs, byDefault.source?.deltas],
    ['http://127.0.0.1:8000', 15_000, false],
  );
  const env = { AEP_OPENHANDS_URL: 'http://127.0.0.1:1', AEP_OPENHANDS_POLL: '2', AEP_OPENHANDS_DELTAS: '1' };
  const fromEnv = vendorSettings(oh, {}, env, tables);
  assert.equal(
    [fromEnv.source?.url, fromEnv.source?.pollMs, fromEnv.source?.deltas],
    ['http://127.0.0.1:1', 2000, true],
  );
  const flagged = vendorSettings(oh, { server: 'http://127.0.0.1:2', poll: '0.5', control: true }, env, tables);
  assert.equal([flagged.source?.url, flagged.source?.pollMs, flagged.gate.control], ['http://127.0.0.1:2', 500, true]);
  assert.throws(() => vendorSettings(oh, { poll: '0' }, {}, tables), /--poll \(AEP_OPENHANDS_POLL\) must be seconds/);
  assert.throws(() => vendorSettings(oh, { server: 'ws://x' }, {}, tables), /--server \(AEP_OPENHANDS_URL\)/);
});

test("a flag the vendor lacks is refused, naming the vendors that take it; another vendor's variable is ignored", () => {
  assert.throws(
    () => vendorSettings(table('claude-code'), { control: true, gateTools: 'x' }, {}, tables),
    /claude-code takes no --control or --gate-tools: --control is for vscode, hermes, openhands, copilot; --gate-tools is for vscode, hermes, copilot/,
  );
  assert.throws(() => vendorSettings(table('openhands'), { gateTools: 'x' }, {}, tables), /--gate-tools is for/);
  assert.throws(() => vendorSettings(table('codex'), { hubUrl: 'ws://h' }, {}, tables), /--hub-url is for cline/);
  const off = vendorSettings(table('vscode'), {}, { AEP_HERMES_CONTROL: '1', AEP_CLINE_HUB: '1' }, tables);
  assert.equal(off, { gate: { control: false } });
});

test("commander's property for a flag is the one the command line gives", () => {
  const rows = tables.flatMap((t) => t.options ?? []);
  const program = new Command('aep-steer');
  registerAdapter(program);
  const adapter = program.commands[0]!;
  for (const o of rows) assert.is(adapter.options.find((x) => x.long === flagName(o))?.attributeName(), optionKey(o));
});

test.run();
