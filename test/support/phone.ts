// A paired phone over plain HTTP, for the console's device tests: the pairing exchange (the
// form POST a phone's browser sends), then requests that carry the cookie it was handed.
import { startConsole, type ConsoleHandle, type ConsoleOptions } from '../../src/console/start.js';
import type { DeviceRights } from '../../src/console/devices.js';
import type { TestStack } from '../cli/support.js';

/** The tailnet address the phone tests' consoles say a phone opens. */
const PHONE_URL = 'https://laptop.tail1234.ts.net';

/** A console on the stack's relay that pairs phones, its state in `env`'s state directory; ready to use. */
export async function phoneConsole(
  stack: TestStack,
  env: NodeJS.ProcessEnv,
  more: Partial<ConsoleOptions> = {},
): Promise<ConsoleHandle> {
  const konsole = await startConsole({
    relay: stack.relayUrl,
    token: stack.token,
    port: 0,
    publicUrl: PHONE_URL,
    phone: { env },
    ...more,
  });
  await konsole.follower.ready;
  return konsole;
}

/** The pairing URL's path on the console's own listening address (a test cannot resolve a tailnet name). */
export const onLocal = (konsole: ConsoleHandle, url: string): string =>
  new URL(new URL(url).pathname + new URL(url).hash, konsole.localUrl).toString();

export async function exchange(konsole: ConsoleHandle, url: string, name: string): Promise<Response> {
  return fetch(onLocal(konsole, url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ name }).toString(),
    redirect: 'manual',
  });
}

/** Pairs a device and returns its cookie (`aep_device=…`). */
export async function pairDevice(konsole: ConsoleHandle, rights: DeviceRights, name: string): Promise<string> {
  const { url } = konsole.phone.pair(rights);
  const r = await exchange(konsole, url, name);
  if (r.status !== 303) throw new Error(`pairing ${name} answered ${r.status}: ${await r.text()}`);
  return r.headers.get('set-cookie')!.split(';')[0]!;
}

/** A device's request under /device/: GET without a body, a JSON POST with one. */
export async function asDevice(
  konsole: ConsoleHandle,
  cookie: string,
  path: string,
  body?: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(new URL(`/device/${path}`, konsole.localUrl), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : { text } };
}
