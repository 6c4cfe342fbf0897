// `aep-steer relay --nats ...` as a real process (one relay node), for tests that kill a node.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from './shared-dir.js';

export interface RelayNode {
  url: string;
  socketUrl: string;
  proc: ChildProcess;
  output(): string;
  /** `kill -9`: no goodbye to its peers, its claims stay until their lease runs out. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRelayNode(args: string[], env: Record<string, string> = {}): Promise<RelayNode> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(projectRoot, 'test/support/relay-cli-entry.ts'), 'relay', '--port', '0', ...args],
    {
      cwd: projectRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay node did not start: ${out}`)), 60_000);
    proc.stderr!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`relay node exited ${code}: ${out}`));
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return {
    url,
    socketUrl: `${url.replace(/^http/, 'ws')}/socket`,
    proc,
    output: () => out,
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
  };
}

/** Relay nodes on one NATS fabric (`--memory`, the same token, lease and namespace), one process each, started in turn. */
export async function startFabricNodes(o: {
  token: string;
  nats: string;
  namespace: string;
  leaseMs: number;
  /** `--nats-replicas`; unset, the cluster's size decides. */
  replicas?: number;
  count?: number;
}): Promise<RelayNode[]> {
  const args = ['--token', o.token, '--memory', '--nats', o.nats, '--nats-lease-ms', String(o.leaseMs)];
  args.push(
    '--nats-namespace',
    o.namespace,
    ...(o.replicas === undefined ? [] : ['--nats-replicas', String(o.replicas)]),
  );
  const nodes: RelayNode[] = [];
  for (let i = 0; i < (o.count ?? 2); i += 1) nodes.push(await startRelayNode(args));
  return nodes;
}
