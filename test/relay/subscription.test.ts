import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SubscribeError } from '../../src/protocol/errors.js';
import { parseFrom, parseLastEventId, parseSubscription, positionId } from '../../src/relay/subscription.js';

const code = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return err instanceof SubscribeError ? err.code : 'other';
  }
};

test('bad filters fail closed with invalid-filter, never match-all (AEP-0003 §6)', () => {
  for (const filter of [
    { seq: 1 },
    { data: {} },
    { type: '*' },
    { session: 's*' },
    [],
    'x',
    { severity: { gt: 'info' } },
    { type: [] },
  ]) {
    assert.is(
      code(() => parseSubscription({ filter }, 10)),
      'invalid-filter',
      JSON.stringify(filter),
    );
  }
});

test('capture ceiling must be a known level (aep-wire §8.9)', () => {
  assert.is(
    code(() => parseSubscription({ capture: 'secret' }, 10)),
    'invalid-filter',
  );
  assert.is(parseSubscription({ capture: 'metadata' }, 10).ceiling, 'metadata');
});

test('from: all, positions with defaults, malformed, over the limit', () => {
  assert.is(parseFrom('all', 1), 'all');
  assert.equal(parseFrom([{ session: 's', epoch: 2 }], 1), [{ session: 's', after: { epoch: 2, seq: -1 } }]);
  assert.equal(parseFrom([{ session: 's', seq: 4 }], 1), [{ session: 's', after: { epoch: 0, seq: 4 } }]);
  assert.is(
    code(() => parseFrom({}, 5)),
    'invalid-filter',
  );
  assert.is(
    code(() => parseFrom([{ epoch: 1 }], 5)),
    'invalid-filter',
  );
  assert.is(
    code(() => parseFrom([{ session: 's', seq: 1.5 }], 5)),
    'invalid-filter',
  );
  assert.is(
    code(() => parseFrom([{ session: 'a' }, { session: 'b' }], 1)),
    'limit-exceeded',
  );
});

test('Last-Event-ID is greedy on the session part; positionId is its inverse', () => {
  assert.equal(parseLastEventId('a:b:3:7'), { session: 'a:b', after: { epoch: 3, seq: 7 } });
  assert.is(parseLastEventId('nonsense'), undefined);
  assert.is(
    positionId({
      aep: '0.1',
      id: 'i',
      type: 'run.started',
      time: 't',
      source: 's',
      agent: 'a',
      session: 'a:b',
      seq: 7,
      epoch: 3,
    }),
    'a:b:3:7',
  );
  assert.is(
    positionId({ aep: '0.1', id: 'i', type: 'agent.heartbeat', time: 't', source: 's', agent: 'a' }),
    undefined,
  );
});

test.run();
