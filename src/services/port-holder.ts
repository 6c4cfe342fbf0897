// Who holds a taken listen port, and the message that says so: the port, the process (when this
// user may see it: Linux /proc/net/tcp{,6} gives the socket's inode, /proc/<pid>/fd the owner)
// and the flag that moves it. Never a claim about the relay: a taken port is only a taken port.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { SteeringError } from '../protocol/errors.js';

interface PortHolder {
  pid: number;
  /** Its command line, spaces between the arguments. */
  command: string;
}

const LISTEN = '0A';

/** The inodes of sockets listening on `port` (any local address), from the kernel's tables. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const local = f[1];
      if (local === undefined || f[3] !== LISTEN) continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && f[9] !== undefined) inodes.add(f[9]);
    }
  }
  return inodes;
}

function commandLineOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
    return argv.length === 0 ? undefined : argv.join(' ');
  } catch {
    return undefined;
  }
}

/** The process listening on `port`, if this user can see it; undefined when it cannot tell. */
function portHolder(port: number): PortHolder | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m !== null && inodes.has(m[1]!)) return { pid: Number(pid), command: commandLineOf(Number(pid)) ?? '?' };
    }
  }
  return undefined;
}

const MAX_COMMAND = 120;

/** ` by pid 123 (node aep-steer.js relay)`, or `` when the holder cannot be told. */
function heldBy(port: number): string {
  const h = portHolder(port);
  if (h === undefined) return '';
  const cmd = h.command.length > MAX_COMMAND ? `${h.command.slice(0, MAX_COMMAND - 1)}…` : h.command;
  return ` by pid ${h.pid} (${cmd})`;
}

/** `relay port 8787 on 127.0.0.1 is taken by pid 9 (…); move it with --port (AEP_PORT)` */
export function portTakenMessage(what: string, port: number, host: string, flag: string): string {
  return `${what} ${port} on ${host} is taken${heldBy(port)}; move it with ${flag}`;
}

type ListenError = { code?: unknown; port?: unknown; cause?: ListenError } | null | undefined;

/** True when `err` is `port` being taken (not another listener's port, such as an inspector's). */
const takes = (err: unknown, port: number): boolean => {
  const e = err as ListenError;
  const sys = e?.code === 'EADDRINUSE' ? e : e?.cause?.code === 'EADDRINUSE' ? e.cause : undefined;
  if (sys === undefined) return false;
  return typeof sys.port !== 'number' || sys.port === port;
};

/**
 * A listen failure said as what to do: `port` taken becomes PORT_IN_USE naming the holder and
 * `flag`; anything else is returned as it was.
 */
export function explainListenError(err: unknown, what: string, port: number, host: string, flag: string): unknown {
  if (!takes(err, port)) return err;
  return new SteeringError('PORT_IN_USE', portTakenMessage(what, port, host, flag), { cause: err });
}

/** True when `port` on `host` can be listened on now (the probe closes at once). */
export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
