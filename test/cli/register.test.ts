// Each consumer command registers on a commander program with its flags, and reads the relay
// URL and token from the environment at registration (D16).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Command } from 'commander';
import { registerAudit } from '../../src/cli/audit-command.js';
import { registerDemo } from '../../src/cli/demo-command.js';
import { registerInspect } from '../../src/cli/inspect-command.js';
import { registerInstruct } from '../../src/cli/instruct-command.js';
import { DEFAULT_RELAY } from '../../src/consumer/connect.js';
import { registerRespond } from '../../src/cli/respond-command.js';
import { registerSessions } from '../../src/cli/sessions-command.js';
import { registerWatch } from '../../src/cli/watch-command.js';

function program(): Command {
  const p = new Command('aep-steer');
  for (const r of [
    registerInstruct,
    registerRespond,
    registerSessions,
    registerWatch,
    registerAudit,
    registerInspect,
    registerDemo,
  ])
    r(p);
  return p;
}

const flagsOf = (p: Command, name: string) => p.commands.find((c) => c.name() === name)!.options.map((o) => o.long);

test('every command is there with its flags', () => {
  const p = program();
  assert.equal(p.commands.map((c) => c.name()).sort(), [
    'audit',
    'demo',
    'inspect',
    'instruct',
    'respond',
    'sessions',
    'watch',
  ]);
  assert.equal(flagsOf(p, 'instruct'), [
    '--session',
    '--vendor',
    '--delivery',
    '--idle',
    '--start',
    '--no-wait',
    '--timeout',
    '--ack-window',
    '--json',
    '--relay',
    '--token',
    '--sender',
  ]);
  assert.equal(flagsOf(p, 'respond'), [
    '--session',
    '--request',
    '--values',
    '--timeout',
    '--json',
    '--relay',
    '--token',
    '--sender',
  ]);
  assert.equal(flagsOf(p, 'watch'), [
    '--filter',
    '--session',
    '--capture',
    '--replay',
    '--history',
    '--limit',
    '--json',
    '--relay',
    '--token',
    '--sender',
  ]);
  assert.equal(flagsOf(p, 'sessions'), ['--all', '--json', '--tree', '--relay', '--token', '--sender']);
  assert.equal(flagsOf(p, 'audit'), ['--json', '--verify', '--key', '--relay', '--token']);
  assert.equal(flagsOf(p, 'inspect'), ['--port', '--relay', '--token']);
  assert.equal(flagsOf(p, 'demo'), ['--port', '--relay-port', '--text', '--scripted', '--claude', '--keep']);
});

test('AEP_RELAY and AEP_TOKEN are the defaults of --relay and --token', () => {
  const before = { relay: process.env['AEP_RELAY'], token: process.env['AEP_TOKEN'] };
  try {
    delete process.env['AEP_RELAY'];
    delete process.env['AEP_TOKEN'];
    const plain = program().commands.find((c) => c.name() === 'sessions')!;
    assert.is(plain.getOptionValue('relay'), DEFAULT_RELAY);
    assert.is(plain.getOptionValue('token'), undefined);
    process.env['AEP_RELAY'] = 'ws://relay.example:9/socket';
    process.env['AEP_TOKEN'] = 't0k';
    const fromEnv = program().commands.find((c) => c.name() === 'sessions')!;
    assert.is(fromEnv.getOptionValue('relay'), 'ws://relay.example:9/socket');
    assert.is(fromEnv.getOptionValue('token'), 't0k');
  } finally {
    for (const [k, v] of [
      ['AEP_RELAY', before.relay],
      ['AEP_TOKEN', before.token],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test.run();
