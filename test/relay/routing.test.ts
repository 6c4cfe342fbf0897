import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command, SessionEmitter, agentEvent } from '../../src/protocol/build.js';
import { accessPolicy } from '../../src/relay/acl.js';
import { classify, claimsSession, routeCommand, type Claimant } from '../../src/relay/routing.js';

const em = new SessionEmitter({ agent: 'a', session: 's1', host: 'h' });
const sender = { agent: 'cli', host: 'h' };
const full = accessPolicy({ token: 't' }).authenticate('t')!;
const peer = (claims: string[], accepts?: string[], role: Claimant['role'] = 'emitter'): Claimant => ({
  role,
  accepts,
  claims: new Set(claims),
});

test('classify: commands, agent-scoped, seq-less session events, positioned events', () => {
  assert.is(classify(command(sender, 's1', { type: 'control.pause' })), 'command');
  assert.is(classify(command(sender, 's1', { type: 'x.codex.control.instruct', data: { text: 'hi' } })), 'command');
  assert.is(classify(agentEvent('a', { type: 'agent.heartbeat' }, 'h')), 'agent');
  assert.is(classify(command(sender, 's1', { type: 'attention.routed' })), 'unpositioned');
  assert.is(classify(em.emit({ type: 'session.started' })), 'positioned');
});

test('claims: sequenced session events claim; attention.routed and commands do not (aep-wire §4.4)', () => {
  assert.is(claimsSession(em.emit({ type: 'run.started', run: 'r' })), 's1');
  assert.is(claimsSession(command(sender, 's1', { type: 'attention.routed' })), undefined);
  assert.is(claimsSession(command(sender, 's1', { type: 'control.pause' })), undefined);
});

const pause = command(sender, 's1', { type: 'control.pause' });

test('D17 unauthorized: unauthenticated or ACL-denied senders', () => {
  const r1 = routeCommand(undefined, pause, [peer(['s1'])]);
  assert.equal(r1.kind === 'refuse' && r1.code, 'unauthorized');
  const watcher = { identity: 'w', commands: [], sessions: ['*'], emit: [], bound: true, authenticated: true };
  const r2 = routeCommand(watcher, pause, [peer(['s1'])]);
  assert.equal(r2.kind === 'refuse' && r2.code, 'unauthorized');
});

test('D17 no-route: nobody claims the session; consumers never count as claimants', () => {
  const r = routeCommand(full, pause, [peer(['s2']), peer(['s1'], undefined, 'consumer')]);
  assert.equal(r.kind === 'refuse' && r.code, 'no-route');
});

test('D17 ambiguous: two live claimants, never a guess', () => {
  const r = routeCommand(full, pause, [peer(['s1']), peer(['s1'], undefined, 'both')]);
  assert.equal(r.kind === 'refuse' && r.code, 'ambiguous');
});

test('D17 unsupported: the claimant declared accepts without the type', () => {
  const r = routeCommand(full, pause, [peer(['s1'], ['control.attention.respond'])]);
  assert.equal(r.kind === 'refuse' && r.code, 'unsupported');
});

test('forward: one claimant that accepts the type, or declared no control block', () => {
  const target = peer(['s1'], ['control.pause']);
  const r = routeCommand(full, pause, [peer(['s2']), target]);
  assert.ok(r.kind === 'forward' && r.target === target);
  const open = peer(['s1']);
  const r2 = routeCommand(full, pause, [open]);
  assert.ok(r2.kind === 'forward' && r2.target === open);
});

test.run();
