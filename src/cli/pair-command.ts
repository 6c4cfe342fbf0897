// `aep-steer pair` (a one-time code for the running console, shown as a QR code and as text) and
// `aep-steer devices` (the paired devices; `devices revoke NAME` ends one's access). Both work on
// the files in the state directory, which the console reads on every request a device makes.
import type { Command } from 'commander';
import { renderUnicodeCompact } from 'uqr';
import { DEVICE_RIGHTS, DeviceStore, checkDeviceName, checkRights, devicesDir } from '../console/devices.js';
import { PairingCodes, pairingDir } from '../console/pairing.js';
import { readConsoleAddress, withTailnet } from '../console/phone.js';
import { pairingUrl } from '../console/phone-reach.js';
import { SteeringError } from '../protocol/errors.js';

/** The QR code (terminal blocks) and the same URL as text, with when it stops working. */
export async function printPairing(url: string, expiresAt: number, out: NodeJS.WritableStream): Promise<void> {
  const qr = renderUnicodeCompact(url, { ecc: 'M' });
  out.write(
    `${qr}\nScan it with the phone's camera, or open:\n  ${url}\n` +
      `One use, until ${new Date(expiresAt).toLocaleTimeString()} (5 minutes). Treat it as a password until then.\n`,
  );
}

const fail = (what: string, err: unknown, code = 2): void => {
  process.stderr.write(`${what}: ${err instanceof SteeringError ? err.message : String(err)}\n`);
  process.exitCode = code;
};

export function registerPair(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  program
    .command('pair')
    .description('pair a phone with the running console: prints a QR code and its URL (one use, 5 minutes)')
    .option('--rights <rights>', `what the device may do: ${DEVICE_RIGHTS.join('|')}`, 'answer')
    .option('--name <name>', 'the name offered for the device (the person may change it on the phone)')
    .action(async (f: { rights: string; name?: string }) => {
      let rights: ReturnType<typeof checkRights>;
      try {
        rights = checkRights(f.rights);
        if (f.name !== undefined) checkDeviceName(f.name);
      } catch (err) {
        return fail('pair', err);
      }
      const at = readConsoleAddress(env);
      if (at === undefined) {
        process.stderr.write(
          'pair: no console is running for this state directory; start one first (aep-steer console --public-url <address a phone opens>), or use aep-steer console --pair\n',
        );
        process.exitCode = 1;
        return;
      }
      let url: string;
      try {
        url = pairingUrl(withTailnet(at), 'x');
      } catch (err) {
        return fail('pair', err);
      }
      const minted = new PairingCodes(pairingDir(env)).mint(rights, f.name);
      await printPairing(url.replace(/x$/, minted.code), minted.expiresAt, process.stdout);
    });

  const devices = program
    .command('devices')
    .description('list the paired devices (name, rights, paired at, last seen); revoke NAME ends one');
  devices.action(() => {
    const store = new DeviceStore(devicesDir(env));
    const all = store.list();
    if (all.length === 0) {
      process.stdout.write('No paired devices. Pair one with: aep-steer pair\n');
      return;
    }
    const rows = all.map((d) => [d.name, d.rights, d.pairedAt, store.lastSeen(d.name) ?? 'never']);
    const head = ['NAME', 'RIGHTS', 'PAIRED', 'LAST SEEN'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const r of [head, ...rows]) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ')}\n`);
  });
  devices
    .command('revoke <name>')
    .description("end a device's access: its next request is refused and its open page stops within a second")
    .action((name: string) => {
      const store = new DeviceStore(devicesDir(env));
      if (!store.revoke(name)) {
        process.stderr.write(
          `devices revoke: no paired device is named ${name}; aep-steer devices lists them (nothing changed)\n`,
        );
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`Revoked ${name}: its token is refused from now on, and its open pages stop.\n`);
    });
}
