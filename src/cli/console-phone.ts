// The console's phone flags: `--reach` says which address a paired phone can use and exits;
// `--pair` (with `--rights`, `--name`) prints a pairing QR code once the console listens. Both
// refuse to build a pairing URL on the loopback the console listens on, and say why, before
// anything starts.
import type { Command } from 'commander';
import { checkDeviceName, checkRights, DEVICE_RIGHTS, type DeviceRights } from '../console/devices.js';
import { withTailnet } from '../console/phone.js';
import { pairingUrl, reachAdvice, type ReachFacts } from '../console/phone-reach.js';
import type { ConsoleHandle, ConsoleOptions } from '../console/start.js';
import { SteeringError } from '../protocol/errors.js';
import { printPairing } from './pair-command.js';

export interface PhoneFlags {
  reach?: boolean;
  pair?: boolean;
  rights: string;
  name?: string;
}

export function addPhoneOptions(cmd: Command): Command {
  return cmd
    .option('--reach', 'say which address a paired phone can use (tailnet, SSH forward, TLS proxy) and exit')
    .option('--pair', 'pair a phone once the console listens: print a QR code for a one-time code')
    .option('--rights <rights>', `with --pair: what the device may do, ${DEVICE_RIGHTS.join('|')}`, 'answer')
    .option('--name <name>', 'with --pair: the name offered for the device');
}

/** Checks the phone flags before start; `done` when the command has answered already (`--reach`, or a refusal). */
export function phoneAtStart(
  f: PhoneFlags,
  port: number,
  reach: Partial<ConsoleOptions>,
): { done: boolean; started(handle: ConsoleHandle): Promise<void> } {
  const scheme = reach.tls ? 'https' : 'http';
  const host = reach.host ?? '127.0.0.1';
  const facts: ReachFacts = {
    port,
    root: reach.publicUrl ?? `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    explicit: reach.publicUrl !== undefined,
  };
  const nothing = { done: true, started: async () => {} };
  if (f.reach === true) {
    process.stdout.write(`${reachAdvice(withTailnet(facts)).lines.join('\n')}\n`);
    return nothing;
  }
  if (f.pair !== true) return { done: false, started: async () => {} };
  let rights: DeviceRights;
  try {
    rights = checkRights(f.rights);
    if (f.name !== undefined) checkDeviceName(f.name);
    pairingUrl(withTailnet(facts), 'x');
  } catch (err) {
    process.stderr.write(`console: ${err instanceof SteeringError ? err.message : String(err)}\n`);
    process.exitCode = 2;
    return nothing;
  }
  return {
    done: false,
    async started(handle) {
      const { url, expiresAt } = handle.phone.pair(rights, f.name);
      await printPairing(url, expiresAt, process.stdout);
    },
  };
}
