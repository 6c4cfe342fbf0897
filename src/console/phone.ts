// The console's paired devices in one place: the device and pairing routes, Web Push to the
// subscribed devices, and a note in the state directory of where this console is reached, so
// `aep-steer pair` (another process) can mint a code and build the URL on that address.
import { readFileSync, rmSync } from 'node:fs';
import type { Agent } from 'node:https';
import { join } from 'node:path';
import type { Board } from '../consumer/board.js';
import type { AepEvent } from '../protocol/envelope.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';
import type { Action } from '../inspect/server.js';
import { vapidKeys, WebPusher } from '../notify/web-push.js';
import { appFiles } from './app-manifest.js';
import { DEVICE_PATH, deviceRoutes } from './device-routes.js';
import { DeviceStore, devicesDir, type Device, type DeviceRights } from './devices.js';
import { FailureLimit, PairingCodes, pairingDir } from './pairing.js';
import { isLoopbackUrl, pairingUrl, tailnetName, type ReachFacts } from './phone-reach.js';

export interface PhoneOptions {
  /** Whose state directory holds devices, codes and VAPID keys (process.env by default). */
  env?: NodeJS.ProcessEnv;
  /** TLS agent for the push service (tests trust a local stand-in with it). */
  pushAgent?: Agent;
  pushGraceMs?: number;
  /** Failed pairing exchanges allowed per minute before every exchange waits (10). */
  pairFailures?: number;
  onPaired?(device: Device): void;
}

export interface PhoneHandle {
  store: DeviceStore;
  codes: PairingCodes;
  /** A one-time code and its URL on the phone's address (refused on the loopback the console listens on). */
  pair(rights: DeviceRights, name?: string): { url: string; expiresAt: number };
}

/** Where a running console says it is reached (for `aep-steer pair`). */
export interface ConsoleAddress extends ReachFacts {
  pid: number;
}

const consoleAddressFile = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'console.json');

export function readConsoleAddress(env: NodeJS.ProcessEnv = process.env): ConsoleAddress | undefined {
  try {
    const a = JSON.parse(readFileSync(consoleAddressFile(env), 'utf8')) as ConsoleAddress;
    process.kill(a.pid, 0);
    return a;
  } catch {
    return undefined;
  }
}

/** The facts with the tailnet name looked up, only when they are about to be shown. */
export function withTailnet(f: ReachFacts): ReachFacts {
  if (f.explicit === true || !isLoopbackUrl(f.root)) return f;
  const tailnet = tailnetName();
  return tailnet === undefined ? f : { ...f, tailnet };
}

export function phoneDevices(
  board: Board,
  actions: Record<string, Action>,
  opts: PhoneOptions & { secure: boolean; publicUrl?: string; warn(m: string): void },
) {
  const env = opts.env ?? process.env;
  const store = new DeviceStore(devicesDir(env));
  const codes = new PairingCodes(pairingDir(env));
  let vapid: ReturnType<typeof vapidKeys> | undefined;
  const keys = () => (vapid ??= vapidKeys(env));
  let facts: ReachFacts | undefined;
  const routes = deviceRoutes({
    store,
    codes,
    limit: new FailureLimit(opts.pairFailures ?? 10),
    secureCookie: opts.secure,
    board,
    actions,
    files: appFiles(),
    pushKey: () => keys().publicKey,
    ...(opts.onPaired ? { onPaired: opts.onPaired } : {}),
  });
  const pusher = new WebPusher({
    vapid: keys,
    subscriptions: () => store.subscriptions(),
    drop: (name, endpoint) => store.dropPush(name, endpoint),
    path: (session, request) =>
      `${DEVICE_PATH}#session=${encodeURIComponent(session)}&request=${encodeURIComponent(request)}`,
    warn: opts.warn,
    ...(opts.pushGraceMs !== undefined ? { graceMs: opts.pushGraceMs } : {}),
    ...(opts.pushAgent ? { agent: opts.pushAgent } : {}),
  });
  const handle: PhoneHandle = {
    store,
    codes,
    pair(rights, name) {
      if (facts === undefined) throw new Error('the console is not listening yet');
      const url = pairingUrl(withTailnet(facts), 'x');
      const minted = codes.mint(rights, name);
      return { url: url.replace(/x$/, minted.code), expiresAt: minted.expiresAt };
    },
  };
  return {
    routes: routes.routes,
    handle,
    changed: routes.changed,
    observe: (e: AepEvent) => pusher.observe(e),
    arm: () => pusher.arm(),
    /** The console listens: note where it is reached. */
    started(root: string, local: string) {
      const port = Number(new URL(local).port);
      facts = { root, port, explicit: opts.publicUrl !== undefined };
      const note: ConsoleAddress = { ...facts, pid: process.pid };
      writePrivateFile(consoleAddressFile(env), JSON.stringify(note));
    },
    async close() {
      routes.close();
      await pusher.close();
      if (readConsoleAddress(env)?.pid === process.pid) rmSync(consoleAddressFile(env), { force: true });
    },
  };
}
