// Where a paired phone reaches the console (issue 53, item 3), with a stand-in `tailscale` on PATH
// that prints what `tailscale status --json` prints: `console --reach` names the tailnet address and
// the two commands that serve it; `--pair` on loopback makes no URL and says the same; a tailscale
// that is installed but not up falls back to the SSH forward; a `--public-url` (tailnet or a TLS
// reverse proxy) is the address the phone opens.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-tailnet-reach-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(projectRoot, 'src/cli/main.ts');

/** A directory holding only a `tailscale` script with this body; PATH is it plus the shell's own. */
function standIn(name: string, body: string): string {
  const bin = join(dir, name);
  mkdirSync(bin);
  writeFileSync(join(bin, 'tailscale'), `#!/bin/sh\n${body}\n`);
  chmodSync(join(bin, 'tailscale'), 0o755);
  return `${bin}:/usr/bin:/bin`;
}

const UP = standIn(
  'up',
  `[ "$1 $2" = "status --json" ] || exit 9
printf '%s' '{"BackendState":"Running","Self":{"DNSName":"laptop.tail1234.ts.net.","HostName":"laptop"}}'`,
);
const DOWN = standIn('down', "echo 'failed to connect to local tailscaled' >&2; exit 1");

const konsole = (path: string, ...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', CLI, 'console', '--relay', 'ws://127.0.0.1:9/', ...args], {
    env: { ...process.env, HOME: dir, AEP_STATE_DIR: dir, PATH: path },
    encoding: 'utf8',
    timeout: 30_000,
  });

/** The command ended with `status`, and its `stream` says every one of `has` and none of `hasNot`. */
function says(
  r: ReturnType<typeof konsole>,
  status: number,
  stream: 'stdout' | 'stderr',
  has: readonly string[],
  hasNot: readonly string[] = [],
): void {
  assert.is(r.status, status, r.stderr);
  for (const h of has) assert.match(r[stream], h);
  for (const h of hasNot) assert.not.match(r[stream], h);
}

test('with tailscale up, --reach names the tailnet address and how to serve the console on it', () => {
  says(
    konsole(UP, '--port', '8798', '--reach'),
    0,
    'stdout',
    [
      'a phone cannot open that address',
      'this machine is laptop.tail1234.ts.net on the tailnet',
      'tailscale serve --bg 8798',
      'aep-steer console --port 8798 --public-url https://laptop.tail1234.ts.net',
    ],
    // No SSH forward offered where the tailnet serves.
    ['ssh -N -L'],
  );
});

test('with tailscale up, --pair on loopback makes no pairing URL and points at the tailnet', () => {
  const r = konsole(UP, '--port', '0', '--pair');
  says(r, 2, 'stderr', [
    'no pairing URL made',
    'loopback, which a phone cannot open',
    '--public-url https://laptop.tail1234.ts.net',
  ]);
  assert.not.match(r.stdout, '/pair/', 'nothing printed a pairing URL');
});

test('tailscale installed but not up: the SSH forward and the TLS proxy are offered instead', () => {
  says(konsole(DOWN, '--port', '8797', '--reach'), 0, 'stdout', [
    'tailscale is not installed (or not up)',
    'ssh -N -L 8797:127.0.0.1:8797',
    'TLS reverse proxy',
  ]);
});

test('a --public-url, the tailnet name or a TLS reverse proxy, is the address a paired phone opens', () => {
  for (const url of ['https://laptop.tail1234.ts.net', 'https://steer.example.org/console/']) {
    const r = konsole(UP, '--port', '8796', '--public-url', url, '--reach');
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stdout, `A paired phone opens ${new URL(url).toString()}`);
    assert.not.match(r.stdout, 'cannot open');
  }
});

test.run();
