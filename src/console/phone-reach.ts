// Which address a paired phone can use to reach the console, and the pairing URL built on it. A
// phone cannot open this machine's loopback, so a pairing URL is never built on the loopback the
// console listens on: the person is told why and what would work instead (the tailnet name when
// tailscale is here, an SSH forward, a TLS reverse proxy). A `--public-url` naming localhost is
// the person saying the phone forwards that port over SSH, and is taken at its word.
import { execFileSync } from 'node:child_process';
import { hostname, userInfo } from 'node:os';
import { SteeringError } from '../protocol/errors.js';

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|\[::1\]|::1|localhost|.*\.localhost|0\.0\.0\.0|\[::\])$/i;

export const isLoopbackUrl = (url: string): boolean => LOOPBACK_HOST.test(new URL(url).hostname);

export interface ReachFacts {
  port: number;
  /** The console's root as links name it (`--public-url`, else the bind address). */
  root: string;
  /** The root is a `--public-url` the person gave. */
  explicit?: boolean;
  /** The machine's tailnet name, when `tailscale` is installed and up. */
  tailnet?: string;
}

/** The tailnet DNS name of this machine, from `tailscale status --json`; undefined without tailscale. */
export function tailnetName(run: typeof execFileSync = execFileSync): string | undefined {
  try {
    const out = run('tailscale', ['status', '--json'], { encoding: 'utf8', timeout: 3000, stdio: 'pipe' });
    const name = (JSON.parse(String(out)) as { Self?: { DNSName?: unknown } }).Self?.DNSName;
    return typeof name === 'string' && name !== '' ? name.replace(/\.$/, '') : undefined;
  } catch {
    return undefined;
  }
}

/** What a person reads: the address a phone can use now, or the ways to get one. */
export function reachAdvice(f: ReachFacts): { phoneUrl?: string; lines: string[] } {
  if (!isLoopbackUrl(f.root) || f.explicit === true)
    return { phoneUrl: f.root, lines: [`A paired phone opens ${f.root} (pair with: aep-steer pair).`] };
  const lines = [`The console is reached at ${f.root}, this machine's loopback: a phone cannot open that address.`];
  if (f.tailnet !== undefined) {
    lines.push(
      `tailscale is here (this machine is ${f.tailnet} on the tailnet): serve the console over HTTPS to your devices:`,
      `  tailscale serve --bg ${f.port}`,
      `  aep-steer console --port ${f.port} --public-url https://${f.tailnet}`,
    );
  } else {
    lines.push(
      'tailscale is not installed (or not up) here; with it, `tailscale serve` gives your devices an HTTPS address.',
      `Without it: on a phone with an SSH client, forward its port ${f.port} here, and start the console saying so:`,
      `  ssh -N -L ${f.port}:127.0.0.1:${f.port} ${userInfo().username}@${hostname()}`,
      `  aep-steer console --port ${f.port} --public-url http://localhost:${f.port}`,
    );
  }
  lines.push(
    'Or put a TLS reverse proxy in front of it and give its address: aep-steer console --public-url https://proxy.example/',
  );
  return { lines };
}

/** The pairing URL on the console's address; refused (with the why) when that is the loopback it listens on. */
export function pairingUrl(f: ReachFacts, code: string): string {
  const { root } = f;
  if (isLoopbackUrl(root) && f.explicit !== true) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `no pairing URL made: the console's address ${root} is loopback, which a phone cannot open. ` +
        reachAdvice(f).lines.slice(1).join('\n'),
    );
  }
  return new URL(`pair/${code}`, root.endsWith('/') ? root : `${root}/`).toString();
}
