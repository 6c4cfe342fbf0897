// Notify targets as a person writes them: on the command line, in AEP_NOTIFY and in a config
// file's `notify` section; a malformed one is refused with the accepted forms listed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SteeringError } from '../../src/protocol/errors.js';
import { parseTarget, targetLabel, targetsFromConfig, targetsFromEnv } from '../../src/notify/targets.js';

test('ntfy and webhook targets, with the metadata ceiling and attention by default', () => {
  assert.equal(parseTarget('ntfy:https://ntfy.sh/my-topic'), {
    kind: 'ntfy',
    url: 'https://ntfy.sh/my-topic',
    capture: 'metadata',
    on: ['attention'],
  });
  assert.equal(parseTarget('webhook:http://127.0.0.1:9000/hook?x=1#capture=redacted&on=attention,dropped,offline'), {
    kind: 'webhook',
    url: 'http://127.0.0.1:9000/hook?x=1',
    capture: 'redacted',
    on: ['attention', 'dropped', 'offline'],
  });
});

test('a malformed target is a CONFIG_INVALID error listing the accepted forms', () => {
  for (const [spec, why] of [
    ['https://ntfy.sh/topic', 'must start with ntfy: or webhook:'],
    ['slack:https://x.example', 'must start with ntfy: or webhook:'],
    ['ntfy:not a url', 'is not a URL'],
    ['ntfy:https://ntfy.sh/', 'names its topic'],
    ['webhook:ftp://x.example/h', 'http: or https:'],
    ['ntfy:https://ntfy.sh/t#capture=everything', 'capture must be one of none, metadata, redacted, full'],
    ['ntfy:https://ntfy.sh/t#on=weather', 'on takes attention, dropped, ended-queued, offline'],
    ['ntfy:https://ntfy.sh/t#colour=red', 'unknown option "colour"'],
  ] as const) {
    try {
      parseTarget(spec);
      assert.unreachable(spec);
    } catch (err) {
      assert.instance(err, SteeringError);
      assert.is((err as SteeringError).code, 'CONFIG_INVALID');
      assert.match((err as Error).message, why, spec);
      assert.match((err as Error).message, 'Accepted forms:\nntfy:https://ntfy.sh/<topic>');
    }
  }
});

test('AEP_NOTIFY takes targets separated by white space; a config section takes strings or objects', () => {
  assert.equal(
    targetsFromEnv('  ntfy:https://ntfy.sh/a\n webhook:https://h.example/x  ').map((t) => t.kind),
    ['ntfy', 'webhook'],
  );
  assert.equal(targetsFromEnv(undefined), []);
  const t = targetsFromConfig([
    'ntfy:https://ntfy.sh/a',
    { target: 'webhook:https://h.example/x', capture: 'redacted', on: ['attention', 'offline'] },
  ]);
  assert.equal(t[1], {
    kind: 'webhook',
    url: 'https://h.example/x',
    capture: 'redacted',
    on: ['attention', 'offline'],
  });
  assert.throws(() => targetsFromConfig({ target: 'x' }), /must be a list of targets/);
  assert.throws(() => targetsFromConfig([{ url: 'https://h.example' }]), /has a "target" string/);
});

test('a target is named in messages without its path (an ntfy topic is its password)', () => {
  assert.is(
    targetLabel(parseTarget('ntfy:https://user:pw@ntfy.example.org/secret-topic')),
    'ntfy:https://ntfy.example.org/…',
  );
});

test.run();
