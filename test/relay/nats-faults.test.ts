// D38 on JetStream, the log of an outage: the commands stream without a leader while the events
// stream has one is said once when it starts and once when it ends, however many commands fail
// meanwhile, and the events stream's writes neither end it nor refuse history for it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Faults, type StreamKind } from '../../src/relay/nats/faults.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const noResponders = () => new Error('503 no responders');

function faults(leaders: Record<StreamKind, boolean>) {
  const lines: string[] = [];
  const probed: StreamKind[] = [];
  const f = new Faults(
    (l) => lines.push(l),
    async (stream) => {
      probed.push(stream);
      if (!leaders[stream]) throw new Error('no leader');
    },
  );
  return { f, lines, probed };
}

test('the commands stream without a leader: one loss line, one recovery line, for many failed commands', async () => {
  const leaders = { events: true, commands: false };
  const { f, lines, probed } = faults(leaders);
  try {
    for (let i = 0; i < 5; i += 1) {
      f.writeFailed(noResponders(), 'commands');
      // Events are written meanwhile: that stream has a leader.
      f.writeConfirmed('events');
      await sleep(300);
    }
    assert.ok(probed.includes('commands'), 'the commands stream was not probed');
    assert.not.ok(probed.includes('events'), 'a stream that did not fail was probed');
    assert.match(f.reason() ?? '', /did not confirm a forwarded command: no responders/);
    assert.is(f.reason('commands'), f.reason());
    assert.is(f.reason('events'), undefined, "the commands stream's outage refuses history writes");
    assert.is(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /store unavailable \(JetStream did not confirm a forwarded command/);

    leaders.commands = true;
    for (let i = 0; i < 20 && f.reason() !== undefined; i += 1) await sleep(100);
    assert.is(f.reason(), undefined, 'the probe did not find the elected leader');
    assert.is(lines.length, 2, lines.join('\n'));
    assert.match(lines[1]!, /store available again after/);
  } finally {
    f.stop();
  }
});

test('both streams failing: the outage ends when the last of them answers', async () => {
  const { f, lines } = faults({ events: true, commands: true });
  try {
    f.writeFailed(noResponders(), 'events');
    f.writeFailed(noResponders(), 'commands');
    f.writeConfirmed('events');
    assert.match(f.reason() ?? '', /forwarded command/);
    f.writeConfirmed('commands');
    assert.is(f.reason(), undefined);
    assert.equal(
      lines.map((l) => l.replace(/after .*/, 'after')),
      [
        'relay: nats: store unavailable (JetStream did not confirm a write: no responders: the stream has no leader); events and commands are refused store-unavailable until it recovers',
        'relay: nats: store available again after',
      ],
    );
  } finally {
    f.stop();
  }
});

test('a lost connection is the reason for every stream, and its recovery is said once', () => {
  const { f, lines } = faults({ events: true, commands: true });
  f.lostConnection('127.0.0.1:4222');
  f.writeFailed(noResponders(), 'commands');
  assert.match(f.reason('events') ?? '', /unreachable/);
  f.reconnected();
  assert.is(f.reason(), undefined, 'a write failed while disconnected counts as the disconnection');
  assert.is(lines.length, 2);
  f.stop();
});

test.run();
