// What `up`, `status` and `down` share: the loopback host and ports, the service names, the flags
// `up` takes, what a planned service is, and the plain lines they print.
import { DEFAULT_RELAY } from '../consumer/connect.js';
import { SteeringError } from '../protocol/errors.js';

/** `up`'s exit when a port is taken (as `demo`'s). */
export const PORT_TAKEN_EXIT = 3;
export const DEFAULT_RELAY_PORT = Number(new URL(DEFAULT_RELAY).port);
export const DEFAULT_READY_MS = 20_000;
/** `up` serves this machine only; a relay others reach is `aep-steer relay --host` run by hand. */
export const HOST = '127.0.0.1';

export interface UpFlags {
  relayPort?: string;
  hookPort: string[];
  instruct?: boolean;
  timeoutMs: string;
  /** `--serve` (true: start or attach to a daemon on `--serve-port`) or `--serve URL` (attach to the person's). */
  serve?: string | boolean;
  servePort?: string;
  serveTokenFile?: string;
}

/** The vendor whose serve lane `--serve` starts a daemon for, and the daemon's service name. */
export const SERVE_VENDOR = 'qwen-code';
export const DAEMON = 'qwen-serve';

export interface Planned {
  name: string;
  port: number;
  /** `aep-steer` arguments; or, for a vendor's daemon, its whole command line in `command`. */
  args: string[];
  command?: { argv: string[]; env: NodeJS.ProcessEnv; cwd: string; url: string; tokenFile: string };
  /** Started after the relay and before the adapters (a daemon an adapter's lane attaches to). */
  daemon?: boolean;
  /** What to say when its port is taken: which port, and the flag that moves it. */
  what: string;
  flag: string;
  ready: () => Promise<boolean>;
}

export const adapterName = (vendor: string): string => `adapter-${vendor}`;
export const invalid = (message: string): SteeringError => new SteeringError('CONFIG_INVALID', message);

export function portNumber(flag: string, v: string, min = 1): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > 65535) throw invalid(`${flag} must be a port ${min}-65535, got "${v}"`);
  return n;
}

export const say = (line: string) => process.stdout.write(`${line}\n`);
export const warn = (line: string) => process.stderr.write(`${line}\n`);
