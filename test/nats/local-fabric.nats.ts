// The "Running several relays" example of docs/operations.md, run as written (scripts/local-fabric.sh) on
// free ports: three JetStream servers, three relay nodes; an instruction sent on node 1 reaches
// a target claiming on node 3 and is acked; a client given a dead node first moves on; SIGTERM
// stops every process the script started.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command } from '../../src/protocol/build.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { freePort } from '../support/nats-server.js';
import { startTestTarget } from '../support/relay-target.js';
import { projectRoot } from '../support/shared-dir.js';

const TOKEN = 'fabric-example';

test('scripts/local-fabric.sh: three relays on one fabric, a command crossing nodes, a clean stop', async () => {
  const ports: number[] = [];
  while (ports.length < 9) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const [n, r, relay] = [ports.slice(0, 3), ports.slice(3, 6), ports.slice(6, 9)];
  const data = mkdtempSync(join(tmpdir(), 'aep-fabric-test-'));
  const script = spawn('bash', [join(projectRoot, 'scripts/local-fabric.sh')], {
    cwd: projectRoot,
    env: {
      ...process.env,
      AEP_TOKEN: TOKEN,
      NATS_PORTS: n.join(' '),
      ROUTE_PORTS: r.join(' '),
      RELAY_PORTS: relay.join(' '),
      DATA_DIR: data,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  script.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  script.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => script.once('exit', (code) => resolve(code)));
  try {
    // Every node up and seeing the other two.
    const health = async (port: number) => {
      try {
        return (await (
          await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })
        ).json()) as any;
      } catch {
        return undefined;
      }
    };
    for (let i = 0; i < 600; i++) {
      const hs = await Promise.all(relay.map(health));
      if (hs.every((h) => h?.ok === true && h.store?.nodes === 3)) break;
      if (i === 599) throw new Error(`the fabric never came up: ${out}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const socket = (p: number) => `ws://127.0.0.1:${p}/socket`;
    const session = `fabric-${process.pid}`;
    const type = 'x.test-target.control.instruct';
    const target = await startTestTarget({
      url: socket(relay[2]!),
      token: TOKEN,
      accepts: [type],
      sessions: [session],
    });
    // The first relay URL given is dead: the consumer moves on to the next node.
    const dead = await freePort();
    const consumer = await RelayConsumer.connect({
      url: `${socket(dead)},${socket(relay[0]!)}`,
      token: TOKEN,
      agent: 'test-cli',
    });
    let roster = await consumer.roster();
    for (let i = 0; i < 100 && !roster.some((e) => e.session === session); i++) roster = await consumer.roster();
    const cmd = command({ agent: 'test-cli', host: 'h' }, session, {
      type,
      capture: 'redacted',
      data: { text: 'run the tests' },
    });
    const r = await consumer.send(cmd, { timeoutMs: 5000 });
    assert.is(r.outcome, 'accepted');
    assert.equal(
      target.received.map((c) => c.id),
      [cmd.id],
    );
    await consumer.close();
    await target.close();
  } finally {
    if (script.exitCode === null) process.kill(-script.pid!, 'SIGTERM');
    else console.error(`script exited early: ${out}`);
    await exited;
  }
  // Nothing left listening: every server and relay the script started is gone.
  await new Promise((res) => setTimeout(res, 300));
  for (const p of [...n, ...relay]) {
    const alive = await fetch(`http://127.0.0.1:${p}/healthz`).then(
      () => true,
      () => false,
    );
    assert.not.ok(alive, `port ${p} still answers`);
  }
  rmSync(data, { recursive: true, force: true });
});

test.run();
