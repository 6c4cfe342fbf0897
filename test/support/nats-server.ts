// Real nats-server processes for tests and benchmarks: JetStream on, free loopback ports, a
// fresh store directory each, and a handle that kills what it started (SIGKILL on request).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NATS_SERVER_BIN = process.env.AEP_NATS_SERVER_BIN ?? 'nats-server';

export interface NatsServer {
  name: string;
  port: number;
  url: string;
  dir: string;
  /** The running process (a new one after `restart`). */
  proc: ChildProcess;
  /** Process output, for a failing test's message. */
  output(): string;
  /** `kill -9`: the node dies without a goodbye. */
  kill(): Promise<void>;
  /** Starts it again after a kill: same name, port, store directory and routes. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A port the kernel just handed out and released (a race only with other port-0 users). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
}

async function waitForPort(port: number, proc: ChildProcess, out: () => string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`nats-server exited ${proc.exitCode}: ${out()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nats-server did not listen on ${port}: ${out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function spawnServer(name: string, port: number, args: string[]): NatsServer {
  const dir = mkdtempSync(join(tmpdir(), `aep-nats-${name}-`));
  let out = '';
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-8000);
  };
  const launch = () => {
    const p = spawn(NATS_SERVER_BIN, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, '-n', name, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.stdout!.on('data', keep);
    p.stderr!.on('data', keep);
    return { p, exited: new Promise<void>((resolve) => p.once('exit', () => resolve())) };
  };
  let run = launch();
  const end = async (signal: NodeJS.Signals) => {
    const { p, exited } = run;
    if (p.exitCode === null && p.signalCode === null) p.kill(signal);
    await exited;
  };
  const server: NatsServer = {
    name,
    port,
    url: `nats://127.0.0.1:${port}`,
    dir,
    proc: run.p,
    output: () => out,
    kill: () => end('SIGKILL'),
    restart: async () => {
      await end('SIGKILL');
      run = launch();
      server.proc = run.p;
      await waitForPort(port, run.p, () => out);
    },
    stop: async () => {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** One JetStream server. */
export async function startNatsServer(): Promise<NatsServer> {
  const port = await freePort();
  const s = spawnServer(`n${port}`, port, []);
  await waitForPort(port, s.proc, s.output);
  return s;
}

export interface NatsCluster {
  servers: NatsServer[];
  /** Every client URL, comma-separated (what `--nats` takes). */
  urls: string;
  stop(): Promise<void>;
}

/** A JetStream cluster of `size` servers routed to each other on loopback. */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const ports: number[] = [];
  const routes: number[] = [];
  while (ports.length < size) {
    const p = await freePort();
    const r = await freePort();
    if (ports.includes(p) || routes.includes(p) || ports.includes(r) || routes.includes(r) || p === r) continue;
    ports.push(p);
    routes.push(r);
  }
  const routeList = routes.map((r) => `nats://127.0.0.1:${r}`).join(',');
  const servers = ports.map((p, i) =>
    spawnServer(`c${i}`, p, [
      '--cluster_name',
      'aep',
      '--cluster',
      `nats://127.0.0.1:${routes[i]}`,
      '--routes',
      routeList,
    ]),
  );
  try {
    await Promise.all(servers.map((s) => waitForPort(s.port, s.proc, s.output)));
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
  return {
    servers,
    urls: servers.map((s) => s.url).join(','),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}
