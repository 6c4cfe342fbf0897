// The console flags for reaching it away from the desk: where pushes go (--notify, a config
// file's `notify`, AEP_NOTIFY), the address a phone uses (--public-url), and a LAN bind, which
// must be HTTPS unless the person says the network is trusted.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { SteeringError } from '../protocol/errors.js';
import { targetsFromConfig, targetsFromEnv, parseTarget, type NotifyTarget } from '../notify/targets.js';
import type { ConsoleOptions } from '../console/start.js';

export interface ReachFlags {
  notify: string[];
  config?: string;
  publicUrl?: string;
  host?: string;
  tlsCert?: string;
  tlsKey?: string;
  insecureLan?: boolean;
  linkMinutes: string;
}

const collect = (v: string, all: string[]): string[] => [...all, v];

export function addReachOptions(cmd: Command, env: NodeJS.ProcessEnv): Command {
  return cmd
    .option(
      '--notify <target>',
      'push when a session waits: ntfy:<topic URL> or webhook:<URL>, repeatable (AEP_NOTIFY)',
      collect,
      [],
    )
    .option(
      '--config <file>',
      'a JSON file whose "notify" lists targets (strings or {target, capture, on})',
      env['AEP_CONSOLE_CONFIG'] || undefined,
    )
    .option(
      '--public-url <url>',
      'the address a phone uses (tailscale serve, an SSH forward, a TLS proxy); links are made with it',
    )
    .option('--host <addr>', 'listen on this address instead of 127.0.0.1 (a LAN bind needs --tls-cert/--tls-key)')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--insecure-lan', 'allow plain HTTP on a non-loopback --host (a network you trust)')
    .option('--link-minutes <n>', 'how long a one-tap answer link lives at most', '10');
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

const usage = (message: string): SteeringError => new SteeringError('CONFIG_INVALID', message);

function readConfig(path: string): NotifyTarget[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw usage(
      `--config ${path}: ${(err as Error).message}; give a JSON file like {"notify": ["ntfy:https://ntfy.sh/<topic>"]}`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw usage(`--config ${path}: the file must hold one JSON object`);
  const unknown = Object.keys(parsed).filter((k) => k !== 'notify');
  if (unknown.length > 0)
    throw usage(`--config ${path}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: notify)`);
  return targetsFromConfig((parsed as { notify?: unknown }).notify);
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw usage(`${flag} ${path}: ${(err as Error).message}`);
  }
}

/** The console options these flags make; a SteeringError (exit 2) for anything malformed. */
export function reachOptions(f: ReachFlags, env: NodeJS.ProcessEnv): Partial<ConsoleOptions> {
  const notify = [
    ...(f.config ? readConfig(f.config) : []),
    ...targetsFromEnv(env['AEP_NOTIFY']),
    ...f.notify.map(parseTarget),
  ];
  const out: Partial<ConsoleOptions> = {};
  if (notify.length > 0) out.notify = notify;
  const minutes = Number(f.linkMinutes);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    throw usage(`--link-minutes must be a number of minutes above 0 and at most 1440, got "${f.linkMinutes}"`);
  out.linkTtlMs = Math.round(minutes * 60_000);
  if (f.publicUrl !== undefined) {
    let u: URL;
    try {
      u = new URL(f.publicUrl);
    } catch {
      throw usage(
        `--public-url "${f.publicUrl}" is not a URL; give the address a phone opens, e.g. https://laptop.tailnet.ts.net`,
      );
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw usage('--public-url must be an http: or https: URL');
    out.publicUrl = u.toString();
  }
  if ((f.tlsCert === undefined) !== (f.tlsKey === undefined))
    throw usage('--tls-cert and --tls-key go together: give both PEM files');
  if (f.tlsCert !== undefined && f.tlsKey !== undefined)
    out.tls = { cert: readPem('--tls-cert', f.tlsCert), key: readPem('--tls-key', f.tlsKey) };
  if (f.host !== undefined) {
    if (isIP(f.host) === 0 && f.host !== 'localhost')
      throw usage(`--host "${f.host}" is not an IP address; give the address to listen on, e.g. 192.168.1.20`);
    // The page steers agents and its URL carries the secret: on a network it travels encrypted.
    if (!LOOPBACK.test(f.host) && out.tls === undefined && f.insecureLan !== true) {
      throw usage(
        `--host ${f.host} would serve the console, which steers your agents, in plain HTTP to everyone on that network ` +
          '(its secret URL and every answer readable on the way). Give --tls-cert and --tls-key (PEM), ' +
          'or keep it on loopback and use --public-url behind tailscale serve or an SSH forward, ' +
          'or pass --insecure-lan for a network you trust.',
      );
    }
    // Host is checked (DNS rebinding): a wildcard bind would answer every name with 421.
    if ((f.host === '0.0.0.0' || f.host === '::') && out.publicUrl === undefined) {
      throw usage(
        `--host ${f.host} listens on every address, but the page answers only to names it knows; ` +
          'give the address phones open with --public-url (e.g. https://192.168.1.20:8791), or --host that address',
      );
    }
    out.host = f.host;
  }
  return out;
}
