// Paired devices (a phone): one file each under <state>/devices/, mode 600, holding the SHA-256
// of the device's token (never the token), the rights chosen at pairing and when it was paired.
// The files are the truth every time a device asks: `aep-steer devices revoke` removes a file and
// the next request from that device is refused, with no process to signal. When it was last seen
// and its Web Push subscription sit in files of their own, so the console writing them can never
// bring a revoked device back.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { newSecret } from '../protocol/secret.js';
import { SteeringError } from '../protocol/errors.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';

/** What a device may do: watch the board; answer held requests too; or steer as the console does. */
export const DEVICE_RIGHTS = ['watch', 'answer', 'steer'] as const;
export type DeviceRights = (typeof DEVICE_RIGHTS)[number];

export interface Device {
  name: string;
  rights: DeviceRights;
  sha256: string;
  pairedAt: string;
}

/** A Web Push subscription as the browser's `PushSubscription.toJSON()` gives it. */
export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** A name is a file name too: letters, digits, `.`, `_`, `-`, at most 40. */
const NAME_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;
/** A device token: 32 characters of base64url (192 bits). */
const TOKEN_CHARS = 32;
/** last seen is written at most this often per device. */
const SEEN_EVERY_MS = 30_000;

export const devicesDir = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'devices');

const digest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export function checkDeviceName(name: string): string {
  if (!NAME_SHAPE.test(name))
    throw new SteeringError(
      'CONFIG_INVALID',
      `device name "${name}" is not usable: give 1 to 40 letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. anna-phone)`,
    );
  return name;
}

export function checkRights(rights: string): DeviceRights {
  if (!(DEVICE_RIGHTS as readonly string[]).includes(rights))
    throw new SteeringError('CONFIG_INVALID', `--rights must be one of ${DEVICE_RIGHTS.join(', ')}, got "${rights}"`);
  return rights as DeviceRights;
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export class DeviceStore {
  private readonly seenWritten = new Map<string, number>();

  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  private file(name: string, kind: 'json' | 'seen' | 'push'): string {
    return join(this.dir, kind === 'json' ? `${name}.json` : `${name}.${kind}.json`);
  }

  /** Every paired device, by name. */
  list(): Device[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((f) => /^[^.].*\.json$/.test(f) && !/\.(seen|push)\.json$/.test(f))
      .map((f) => readJson<Device>(join(this.dir, f)))
      .filter((d): d is Device => d !== undefined && typeof d.sha256 === 'string' && NAME_SHAPE.test(d.name))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): Device | undefined {
    if (!NAME_SHAPE.test(name)) return undefined;
    return readJson<Device>(this.file(name, 'json'));
  }

  /** Pairs a new device; its token is returned once, to be handed to the device and kept nowhere else. */
  add(name: string, rights: DeviceRights): { device: Device; token: string } {
    checkDeviceName(name);
    if (this.get(name) !== undefined)
      throw new SteeringError(
        'CONFIG_INVALID',
        `a device named ${name} is paired already; pick another name, or revoke it first (aep-steer devices revoke ${name})`,
      );
    const token = newSecret(TOKEN_CHARS);
    const device: Device = { name, rights, sha256: digest(token), pairedAt: new Date(this.now()).toISOString() };
    writePrivateFile(this.file(name, 'json'), `${JSON.stringify(device, null, 2)}\n`);
    return { device, token };
  }

  /** The device this token belongs to, read from disk now (a revoked one is gone at once). */
  authenticate(token: string | undefined): Device | undefined {
    if (token === undefined || !/^[A-Za-z0-9_-]{32}$/.test(token)) return undefined;
    const want = Buffer.from(digest(token), 'hex');
    const found = this.list().find((d) => {
      const have = Buffer.from(d.sha256, 'hex');
      return have.length === want.length && timingSafeEqual(have, want);
    });
    if (found) this.seen(found.name);
    return found;
  }

  /** When the device last asked for anything (ISO time), if it ever did. */
  lastSeen(name: string): string | undefined {
    return readJson<{ at: string }>(this.file(name, 'seen'))?.at;
  }

  private seen(name: string): void {
    const at = this.now();
    if (at - (this.seenWritten.get(name) ?? 0) < SEEN_EVERY_MS) return;
    this.seenWritten.set(name, at);
    writePrivateFile(this.file(name, 'seen'), JSON.stringify({ at: new Date(at).toISOString() }));
  }

  /** Removes the device and everything kept for it; false when there was none of that name. */
  revoke(name: string): boolean {
    const had = this.get(name) !== undefined;
    if (NAME_SHAPE.test(name))
      for (const k of ['json', 'seen', 'push'] as const) rmSync(this.file(name, k), { force: true });
    this.seenWritten.delete(name);
    return had;
  }

  setPush(name: string, sub: PushSubscriptionJson): void {
    writePrivateFile(this.file(name, 'push'), JSON.stringify(sub));
  }

  /** Forgets a subscription the push service no longer knows (404/410). */
  dropPush(name: string, endpoint: string): void {
    if (readJson<PushSubscriptionJson>(this.file(name, 'push'))?.endpoint === endpoint)
      rmSync(this.file(name, 'push'), { force: true });
  }

  /** The subscriptions of devices still paired: a revoked device's push file is never read. */
  subscriptions(): { name: string; sub: PushSubscriptionJson }[] {
    return this.list().flatMap((d) => {
      const sub = readJson<PushSubscriptionJson>(this.file(d.name, 'push'));
      return sub && typeof sub.endpoint === 'string' ? [{ name: d.name, sub }] : [];
    });
  }
}

/** The rights an action needs: answering a held request needs `answer`, every other verb `steer`. */
export function mayAct(rights: DeviceRights, action: string): boolean {
  if (rights === 'steer') return true;
  return rights === 'answer' && action === 'respond';
}
