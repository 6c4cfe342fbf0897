// The adapter's account of its relay link, driven directly: retries with the same reason are said
// once, a new reason once more, nothing before the hook endpoint listens (a start that fails says
// nothing about the relay), a hello that came before start() is said at start, and errors that are
// not about reaching the relay go to the general report.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { SteeringError } from '../../src/protocol/errors.js';
import { relayReporter } from '../../src/cli/relay-status.js';

const URL = 'ws://127.0.0.1:1/socket';
const refused = (port = 1) =>
  new SteeringError('RELAY_UNREACHABLE', `relay link: connect ECONNREFUSED 127.0.0.1:${port}`);

function setup() {
  const state = new Subject<boolean>();
  const lines: string[] = [];
  const reported: string[] = [];
  const r = relayReporter(
    URL,
    state,
    (l) => lines.push(l),
    (e) => reported.push(e.code),
  );
  return { state, lines, reported, r };
}

test('ten failed attempts: one line; a different reason: one more; back: one', () => {
  const { state, lines, r } = setup();
  r.start();
  for (let i = 0; i < 10; i++) r.onLinkError(refused());
  assert.is(lines.length, 1);
  assert.match(lines[0]!, `relay unreachable: ${URL}; retrying every second`);
  assert.match(lines[0]!, 'reason: relay link: connect ECONNREFUSED 127.0.0.1:1 [RELAY_UNREACHABLE]');
  const token = new SteeringError('RELAY_UNAUTHORIZED', 'relay refused the token (HTTP 401)');
  for (let i = 0; i < 5; i++) r.onLinkError(token);
  assert.is(lines.length, 2);
  // A refused token is said as such, with where the token comes from, never as an unreachable relay.
  assert.match(
    lines[1]!,
    `aep-steer adapter: relay now refuses this adapter: ${URL}; reason: relay refused the token (HTTP 401) [RELAY_UNAUTHORIZED]; give the relay's token with --token or AEP_TOKEN`,
  );
  const moved = new SteeringError('RELAY_UNREACHABLE', 'relay link: connect ECONNREFUSED 127.0.0.1:2');
  r.onLinkError(moved);
  assert.is(lines.length, 2, 'another port is not another reason (digits are folded)');
  state.next(true);
  assert.is(lines.length, 3);
  assert.is(lines[2], `aep-steer adapter: relay connected: ${URL} (reachable again)`);
  r.stop();
});

test('a start that fails: what the link said before is never said', () => {
  const { lines, reported, r } = setup();
  r.onLinkError(refused());
  r.stop();
  r.onLinkError(
    new SteeringError('RELAY_UNREACHABLE', 'relay link: WebSocket was closed before the connection was established'),
  );
  r.start();
  assert.equal(lines, []);
  assert.equal(reported, []);
});

test('a hello before start() is said at start; errors of another kind go to the report', () => {
  const { state, lines, reported, r } = setup();
  state.next(true);
  assert.equal(lines, []);
  r.start();
  assert.equal(lines, [`aep-steer adapter: relay connected: ${URL}`]);
  r.onLinkError(new SteeringError('RELAY_PROTOCOL', 'bad frame'));
  assert.equal(reported, ['RELAY_PROTOCOL']);
  // Lost with the error that closed it: said at once, with that reason.
  r.onLinkError(refused());
  state.next(false);
  assert.is(lines.length, 2);
  assert.match(lines[1]!, `relay lost: ${URL}; reconnecting every second`);
  r.onLinkError(refused());
  assert.is(lines.length, 2);
  state.next(true);
  assert.is(lines[2], `aep-steer adapter: relay reconnected: ${URL}; its sessions are claimed again`);
  r.stop();
});

test.run();
