// The page a pairing QR opens (`/pair/<code>`). GET only shows what pairing will do and asks the
// person to name the device, so a link preview spends nothing; the form's POST spends the code,
// pairs the device and hands its token over as an HttpOnly cookie, then sends the browser to
// /device/. A refused code pairs nothing, and every refusal counts toward the rate limit.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FRAME_HEADERS } from '../inspect/page-policy.js';
import { formPagePolicy, sendFormPage } from './answer-page.js';
import { checkDeviceName, type Device, type DeviceStore } from './devices.js';
import type { FailureLimit, PairingCodes, PairTake } from './pairing.js';

export interface PairContext {
  store: DeviceStore;
  codes: PairingCodes;
  limit: FailureLimit;
  /** Mark the cookie Secure: the console is reached over HTTPS. */
  secureCookie: boolean;
  /** Told of each device paired (the console prints it). */
  onPaired?(device: Device): void;
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:0;padding:24px;max-width:32rem;color:#1d232a}h1{font-size:20px}' +
  'p{overflow-wrap:anywhere}label{display:block;margin:12px 0 4px}input{font:inherit;padding:10px;width:100%;box-sizing:border-box}' +
  'button{font:inherit;margin-top:16px;padding:12px 20px;min-height:48px;border-radius:8px;border:1px solid #2f6fdb;background:#2f6fdb;color:#fff}';
const POLICY = formPagePolicy(STYLE);
/** A form body is a name and nothing else. */
const MAX_FORM = 2048;
/** A paired device keeps its cookie for a year; revoking it is what ends its access. */
const COOKIE_AGE_S = 365 * 24 * 3600;

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function send(res: ServerResponse, status: number, title: string, body: string, headers: Record<string, string> = {}) {
  sendFormPage(
    res,
    POLICY,
    status,
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
      `<meta name="referrer" content="no-referrer"><title>${esc(title)}</title><style>${STYLE}</style></head><body>` +
      `<h1 data-field="title">${esc(title)}</h1>${body}</body></html>`,
    headers,
  );
}

const para = (text: string): string => `<p data-field="message">${esc(text)}</p>`;

function refused(ctx: PairContext, res: ServerResponse, take: PairTake & { ok: false }): void {
  ctx.limit.fail();
  send(res, take.status, 'Not paired', para(take.message), { 'x-aep-code': take.code });
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_FORM) return undefined;
    chunks.push(c as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function servePair(ctx: PairContext, code: string, req: IncomingMessage, res: ServerResponse) {
  const wait = ctx.limit.blockedFor();
  if (wait > 0) {
    req.resume();
    return send(
      res,
      429,
      'Too many tries',
      para(`Too many pairing codes were refused just now; nothing was paired. Try again in ${wait} s.`),
      { 'retry-after': String(wait), 'x-aep-code': 'pair-rate-limited' },
    );
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    const peek = ctx.codes.peek(code);
    if (!peek.ok) return refused(ctx, res, peek);
    return send(res, 200, 'Pair this device', form(peek.pair.rights, peek.pair.name ?? ''));
  }
  if (req.method !== 'POST') {
    req.resume();
    res.writeHead(405, { allow: 'GET, HEAD, POST' }).end();
    return;
  }
  const fields = await readForm(req);
  const name = (fields?.get('name') ?? '').trim();
  // The name is checked before the code is spent, so a typo costs no new code.
  let problem: string | undefined;
  try {
    checkDeviceName(name);
    if (ctx.store.get(name) !== undefined)
      problem = `A device named ${name} is paired already; give this one another name.`;
  } catch (err) {
    problem = (err as Error).message.replace(/^device name/, 'The name');
  }
  const peek = ctx.codes.peek(code);
  if (!peek.ok) {
    // An expired code is spent too, so it is refused the same way from then on.
    if (peek.code === 'pair-code-expired') ctx.codes.take(code);
    return refused(ctx, res, peek);
  }
  if (problem !== undefined) return send(res, 400, 'Pair this device', para(problem) + form(peek.pair.rights, name));
  const take = ctx.codes.take(code);
  if (!take.ok) return refused(ctx, res, take);
  const { device, token } = ctx.store.add(name, take.pair.rights);
  ctx.onPaired?.(device);
  const cookie = [
    `aep_device=${token}`,
    'Path=/device/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${COOKIE_AGE_S}`,
    ...(ctx.secureCookie ? ['Secure'] : []),
  ].join('; ');
  for (const [k, v] of Object.entries(FRAME_HEADERS)) res.setHeader(k, v);
  res.writeHead(303, { location: '/device/', 'set-cookie': cookie, 'cache-control': 'no-store' }).end();
}

const RIGHTS_TEXT = {
  watch: 'see the sessions and what waits',
  answer: 'see the sessions and answer held requests',
  steer: 'see the sessions, answer requests and send, withdraw, edit or stop instructions',
} as const;

function form(rights: keyof typeof RIGHTS_TEXT, name: string): string {
  return (
    para(`This device will be able to ${RIGHTS_TEXT[rights]} (rights: ${rights}), until it is revoked.`) +
    '<form method="post"><label for="name">Name this device</label>' +
    `<input id="name" name="name" required maxlength="40" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,39}" value="${esc(name)}" placeholder="anna-phone">` +
    '<button type="submit">Pair this device</button></form>'
  );
}
