// D45 with D16: the spawn settings come from the flags, else from AEP_SPAWN_ROOT (roots joined by
// the path separator, as PATH) and AEP_MAX_SPAWNED; a flag replaces its variable whole; a cap
// without a root, a bad cap, and a vendor that cannot spawn each stop the start with a sentence
// naming both the flag and the variable.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adapterConfig, type AdapterFlags } from '../../src/cli/adapter-command.js';
import { collectRoots } from '../../src/cli/adapter-spawn.js';
import type { SteeringError } from '../../src/protocol/index.js';

// The hook secret is made once in the state dir: a directory of this test's own.
const base = { AEP_STATE_DIR: mkdtempSync(join(tmpdir(), 'aep-spawn-env-')) };
const config = (flags: AdapterFlags, env: Record<string, string>) => adapterConfig('codex', flags, { ...base, ...env });

test('AEP_SPAWN_ROOT with the path separator gives each root; AEP_MAX_SPAWNED the cap', () => {
  const cfg = config({}, { AEP_SPAWN_ROOT: ['/a', '/b', ''].join(delimiter), AEP_MAX_SPAWNED: '2' });
  assert.equal(cfg.spawn, { roots: ['/a', '/b'], max: 2 });
  assert.equal(config({}, { AEP_SPAWN_ROOT: '/a' }).spawn, { roots: ['/a'], max: 4 }, 'default cap 4');
  assert.is(config({}, {}).spawn, undefined, 'no root: spawn off');
});

test('a flag replaces its variable whole', () => {
  const roots = collectRoots('/y', collectRoots('/x', undefined));
  const cfg = config({ spawnRoot: roots, maxSpawned: '3' }, { AEP_SPAWN_ROOT: '/a', AEP_MAX_SPAWNED: '9' });
  assert.equal(cfg.spawn, { roots: ['/x', '/y'], max: 3 });
});

test('a cap without a root, a bad cap and a vendor that cannot spawn: CONFIG_INVALID naming flag and variable', () => {
  const fails = (flags: AdapterFlags, env: Record<string, string>, token = 'codex'): SteeringError => {
    try {
      adapterConfig(token, flags, { ...base, ...env });
    } catch (err) {
      return err as SteeringError;
    }
    throw new Error('expected a refusal');
  };
  const noRoot = fails({}, { AEP_MAX_SPAWNED: '2' });
  assert.is(noRoot.code, 'CONFIG_INVALID');
  assert.match(noRoot.message, /--max-spawned \(AEP_MAX_SPAWNED\) needs at least one --spawn-root \(AEP_SPAWN_ROOT\)/);
  assert.match(
    fails({}, { AEP_SPAWN_ROOT: '/a', AEP_MAX_SPAWNED: 'lots' }).message,
    /AEP_MAX_SPAWNED\) must be an integer 1-64, got "lots"/,
  );
  assert.match(
    fails({}, { AEP_SPAWN_ROOT: '/a' }, 'hermes').message,
    /cannot start sessions: drop --spawn-root \(and AEP_SPAWN_ROOT\)/,
  );
});

test.run();
