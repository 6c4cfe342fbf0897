// The routes a paired phone uses, outside the console's secret path: /device/ (the console page,
// its snapshot stream and its actions, all behind the device's token) and /pair/<code> (the
// exchange of a one-time code for that token). The token travels as an HttpOnly cookie set by the
// exchange: the browser keeps it and sends it, and no script, screen or URL ever shows it. Every
// request reads the device files again, so a revoked device's next request is refused, and a poll
// ends its open stream within a second (the console's D39).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Board } from '../consumer/board.js';
import { FRAME_HEADERS } from '../inspect/page-policy.js';
import { readJson, type Action } from '../inspect/server.js';
import { mayAct, type Device, type DeviceStore } from './devices.js';
import { DEVICE_HTML, DEVICE_POLICY, SERVICE_WORKER } from './device-page.js';
import { servePair, type PairContext } from './pair-page.js';

export const DEVICE_PATH = '/device/';
const PAIR_PATH = '/pair/';
const DEVICE_COOKIE = 'aep_device';
/** How often open streams are checked against the device files. */
const REVOKE_POLL_MS = 250;

export interface DeviceRoutesOptions extends Omit<PairContext, 'store'> {
  store: DeviceStore;
  board: Board;
  /** The console's actions; a device's call passes who it is (`decided_by.device`, D46). */
  actions: Record<string, Action>;
  /** The manifest and icons (public: a manifest is fetched without cookies). */
  files: Record<string, { type: string; body: string | Buffer }>;
  /** The VAPID public key a push subscription is made with (made on first use). */
  pushKey(): string;
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
};

/** No Origin (a same-origin GET-less client) or one naming the very host asked, which was checked already. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function tokenOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, v] = part.trim().split('=');
    if (k === DEVICE_COOKIE && v !== undefined) return v;
  }
  return undefined;
}

const NOT_PAIRED = {
  error: true,
  code: 'device-unknown',
  message:
    'This device is not paired with this console, or it was revoked. Pair it again: run aep-steer pair on the computer and scan the code.',
};

export function deviceRoutes(opts: DeviceRoutesOptions) {
  const clients = new Map<ServerResponse, Device>();
  let pending = false;
  let poll: NodeJS.Timeout | undefined;

  /** Ends every open stream whose device file is gone or now holds another token. */
  const sweep = (): void => {
    for (const [res, d] of clients) {
      if (opts.store.get(d.name)?.sha256 === d.sha256) continue;
      clients.delete(res);
      res.end();
    }
    if (clients.size === 0) {
      clearInterval(poll);
      poll = undefined;
    }
  };

  const serveDevice = async (rest: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [k, v] of Object.entries(FRAME_HEADERS)) res.setHeader(k, v);
    const file = Object.hasOwn(opts.files, rest) ? opts.files[rest] : undefined;
    if (req.method === 'GET' && (file !== undefined || rest === 'sw.js')) {
      // Public: a manifest and a worker script hold nothing of the board.
      const body = file ?? { type: 'text/javascript; charset=utf-8', body: SERVICE_WORKER };
      res.writeHead(200, { 'content-type': body.type, 'cache-control': 'no-cache' }).end(body.body);
      return;
    }
    const device = opts.store.authenticate(tokenOf(req));
    if (device === undefined) {
      req.resume();
      if (rest === '' && req.method === 'GET') {
        res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
        res.end(`${NOT_PAIRED.message}\n`);
        return;
      }
      return json(res, 401, NOT_PAIRED);
    }
    if (req.method === 'POST' && rest.startsWith('api/')) return act(opts, rest.slice(4), device, req, res);
    if (req.method !== 'GET') {
      req.resume();
      res.writeHead(405, { allow: 'GET, POST' }).end();
      return;
    }
    if (rest === '' || rest === 'index.html') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
        'content-security-policy': DEVICE_POLICY,
      });
      res.end(DEVICE_HTML);
      return;
    }
    if (rest === 'state') return json(res, 200, opts.board.snapshot());
    if (rest === 'push-key') return json(res, 200, { key: opts.pushKey() });
    if (rest === 'events') {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write(`event: snapshot\ndata: ${JSON.stringify(opts.board.snapshot())}\n\n`);
      clients.set(res, device);
      req.on('close', () => clients.delete(res));
      poll ??= setInterval(sweep, REVOKE_POLL_MS);
      poll.unref();
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  };

  const broadcast = (): void => {
    pending = false;
    const frame = `event: snapshot\ndata: ${JSON.stringify(opts.board.snapshot())}\n\n`;
    for (const res of clients.keys()) res.write(frame);
  };

  return {
    routes: {
      [DEVICE_PATH]: serveDevice,
      [PAIR_PATH]: (rest: string, req: IncomingMessage, res: ServerResponse) => servePair(opts, rest, req, res),
    },
    /** The board changed: open device pages get a new snapshot (coalesced per tick). */
    changed(): void {
      if (pending || clients.size === 0) return;
      pending = true;
      setImmediate(broadcast);
    },
    close(): void {
      clearInterval(poll);
      for (const res of clients.keys()) res.end();
      clients.clear();
    },
  };
}

/** A device's POST: same origin, JSON, and only what its rights cover. */
async function act(
  opts: DeviceRoutesOptions,
  name: string,
  device: Device,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // Same origin (the Host was checked already) and JSON only: another site cannot drive it.
  if (!sameOrigin(req)) {
    req.resume();
    return json(res, 403, { error: true, code: 'cross-origin', message: 'cross-origin request refused' });
  }
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
    req.resume();
    return json(res, 415, { error: true, code: 'not-json', message: 'send application/json' });
  }
  const body = await readJson(req);
  if (body === undefined)
    return json(res, 400, { error: true, code: 'invalid-request', message: 'the body must be one JSON object' });
  if (name === 'subscribe') return subscribe(opts, device, body, res);
  const action = opts.actions[name];
  if (action === undefined) return json(res, 404, { error: true, code: 'no-action', message: `no action ${name}` });
  if (!mayAct(device.rights, name)) {
    return json(res, 403, {
      error: true,
      code: 'right-not-given',
      message: `This device was paired with the right to ${device.rights}, which does not cover ${name}. Pair it again with --rights ${name === 'respond' ? 'answer' : 'steer'} to do this from it.`,
    });
  }
  // The device speaks with the console's relay identity (D48: never a second key of its own).
  const out = await action(body, { device: device.name });
  json(res, out.status, out.body);
}

function subscribe(
  opts: DeviceRoutesOptions,
  device: Device,
  body: Record<string, unknown>,
  res: ServerResponse,
): void {
  const keys = body['keys'] as Record<string, unknown> | undefined;
  const endpoint = body['endpoint'];
  let ok = typeof endpoint === 'string' && typeof keys?.['p256dh'] === 'string' && typeof keys['auth'] === 'string';
  if (ok) ok = URL.canParse(endpoint as string) && new URL(endpoint as string).protocol === 'https:';
  if (!ok) {
    json(res, 400, {
      error: true,
      code: 'push-subscription-invalid',
      message: 'give the PushSubscription as JSON: an https endpoint and keys p256dh and auth.',
    });
    return;
  }
  opts.store.setPush(device.name, {
    endpoint: endpoint as string,
    keys: { p256dh: keys!['p256dh'] as string, auth: keys!['auth'] as string },
  });
  json(res, 200, { error: false, message: 'This device is told when something waits.' });
}
