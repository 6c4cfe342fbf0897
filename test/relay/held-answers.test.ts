// D41 across nodes, on the target's node: answers to a command handed there ahead of its writes
// wait, with what their session sends after them, until those writes ended; other sessions go
// on, and each forward of the command counts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { HeldAnswers } from '../../src/relay/crossed.js';
import type { Incoming } from '../../src/relay/types.js';

const item = (id: string, session: string, type: string, cause?: string): Incoming => {
  const event = {
    aep: '0.1',
    id,
    type,
    session,
    source: 'adapter',
    ...(cause ? { cause } : {}),
  } as unknown as AepEvent;
  return { event, line: JSON.stringify(event) };
};

function held() {
  const taken: string[] = [];
  const h = new HeldAnswers<string>((batch, origin) => {
    for (const i of batch) taken.push(`${i.event.id}@${origin}`);
  });
  const publish = (i: Incoming, origin = 'adapter') => {
    for (const x of h.now([i], origin)) taken.push(`${x.event.id}@${origin}`);
  };
  return { h, taken, publish };
}

test("an answer waits for its command's writes, with its session's later events; other sessions go on", () => {
  const { h, taken, publish } = held();
  h.wait('cmd-1');
  publish(item('ack', 's1', 'control.accepted', 'cmd-1'));
  publish(item('after', 's1', 'progress.status'));
  publish(item('elsewhere', 's2', 'progress.status'));
  // Only an outcome event waits: a progress event naming the command as cause goes on.
  publish(item('note', 's3', 'progress.status', 'cmd-1'));
  assert.equal(taken, ['elsewhere@adapter', 'note@adapter']);
  h.go('cmd-1');
  assert.equal(taken, ['elsewhere@adapter', 'note@adapter', 'ack@adapter', 'after@adapter']);
  publish(item('later', 's1', 'progress.status'));
  assert.equal(taken.at(-1), 'later@adapter');
});

test('a command forwarded twice is held until both forwards ended', () => {
  const { h, taken, publish } = held();
  h.wait('cmd-2');
  h.wait('cmd-2');
  publish(item('ack', 's1', 'control.accepted', 'cmd-2'));
  h.go('cmd-2');
  assert.equal(taken, []);
  h.go('cmd-2');
  assert.equal(taken, ['ack@adapter']);
  // An end heard twice (the stream copy after the hold ran out) changes nothing.
  h.go('cmd-2');
  assert.equal(taken, ['ack@adapter']);
});

test.run();
