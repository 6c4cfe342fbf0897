import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import { accessPolicy, parseTokensFile } from '../../src/relay/acl.js';
import { routeCommand, type Claimant } from '../../src/relay/routing.js';

const home: Claimant = { role: 'emitter', accepts: ['x.codex.control.spawn'], claims: new Set(['codex.home.1']) };
const spawn = (agent: string) =>
  command({ agent, host: 'h' }, 'codex.home.1', {
    type: 'x.codex.control.spawn',
    data: { prompt: 'hi', cwd: '/w' },
  });

test('D45: a tokens-file identity with every command but no spawn right is refused, with what to add', () => {
  const entries = parseTokensFile(
    JSON.stringify({
      tokens: [
        { token: 'a', identity: 'orch', commands: ['*'] },
        { token: 'b', identity: 'boss', commands: ['*'], spawn: true },
      ],
    }),
  );
  const policy = accessPolicy({ entries, fromFile: true });
  const refused = routeCommand(policy.authenticate('a'), spawn('orch'), [home]);
  assert.equal(refused.kind, 'refuse');
  if (refused.kind === 'refuse') {
    assert.is(refused.code, 'unauthorized');
    assert.match(refused.detail, /orch has no spawn right; add "spawn": true/);
  }
  assert.is(routeCommand(policy.authenticate('b'), spawn('boss'), [home]).kind, 'forward');
  // The right is about spawning only: the same identity's other commands pass as before.
  const instruct = command({ agent: 'orch', host: 'h' }, 'codex.home.1', {
    type: 'x.codex.control.instruct',
    data: { text: 'x' },
  });
  assert.is(routeCommand(policy.authenticate('a'), instruct, [{ ...home, accepts: undefined }]).kind, 'forward');
});

test('D45: the one-user shared token may spawn (the adapter flag turns it on)', () => {
  const shared = accessPolicy({ token: 't' }).authenticate('t');
  assert.is(routeCommand(shared, spawn('cli'), [home]).kind, 'forward');
});

test('D45: "spawn" must be a boolean in the tokens file', () => {
  assert.throws(
    () => parseTokensFile(JSON.stringify({ tokens: [{ token: 'a', identity: 'x', spawn: 'yes' }] })),
    /tokens\[0\]\.spawn must be true or false/,
  );
});

test.run();
