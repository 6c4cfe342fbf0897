// A local stand-in for a Web Push service (HTTPS on 127.0.0.1, a throwaway certificate): it checks
// each push's VAPID JWT (ES256 by the key in `k=`, audience this origin, expiry within a day),
// decrypts the body as the subscribed browser would (RFC 8291 key derivation over RFC 8188
// aes128gcm, with the subscription's private key and auth secret) and records `urgency` and `TTL`.
// A subscription is made with `subscribe(id)`; `status[id]` makes the service answer that code.
import { createECDH, createDecipheriv, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface ReceivedPush {
  id: string;
  urgency: string | undefined;
  ttl: string | undefined;
  /** The VAPID public key the push was signed with (`k=`). */
  vapidKey: string;
  /** Every check of the JWT passed (signature, alg, aud, exp, sub). */
  vapidOk: boolean;
  /** The decrypted payload, as text. */
  text: string;
}

export interface PushService {
  url: string;
  agent: Agent;
  received: ReceivedPush[];
  status: Record<string, number>;
  subscribe(id: string): { endpoint: string; keys: { p256dh: string; auth: string } };
  next(test: (p: ReceivedPush) => boolean): Promise<ReceivedPush>;
  close(): Promise<void>;
}

const b64u = (b: Buffer): string => b.toString('base64url');

function certificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const r = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  if (r.status !== 0) throw new Error(`openssl could not make a test certificate: ${r.stderr}`);
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}

/** `Authorization: vapid t=<jwt>, k=<key>` checked against RFC 8292. */
function checkVapid(header: string | undefined, origin: string): { ok: boolean; key: string } {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) return { ok: false, key: '' };
  const [h, p, s] = m[1]!.split('.');
  const raw = Buffer.from(m[2]!, 'base64url');
  if (h === undefined || p === undefined || s === undefined || raw.length !== 65) return { ok: false, key: m[2]! };
  const head = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud?: string; exp?: number; sub?: string };
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33)) },
    format: 'jwk',
  });
  const signed = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'),
  );
  const now = Date.now() / 1000;
  const ok =
    signed &&
    head.alg === 'ES256' &&
    claims.aud === origin &&
    typeof claims.exp === 'number' &&
    claims.exp > now &&
    claims.exp <= now + 24 * 3600 &&
    typeof claims.sub === 'string';
  return { ok, key: m[2]! };
}

/** RFC 8291 §3.4 then RFC 8188 §2: one record, padding delimiter 2. */
function decrypt(body: Buffer, ua: ECDH, auth: Buffer): string {
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  const ecdh = ua.computeSecret(asPublic);
  const info = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdh, auth, info, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const d = createDecipheriv('aes-128-gcm', cek, nonce);
  d.setAuthTag(record.subarray(record.length - 16));
  const plain = Buffer.concat([d.update(record.subarray(0, record.length - 16)), d.final()]);
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (plain[end] !== 2) throw new Error('no last-record padding delimiter');
  return plain.subarray(0, end).toString('utf8');
}

export async function startPushService(): Promise<PushService> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-push-service-'));
  const pem = certificate(dir);
  const subs = new Map<string, { ua: ECDH; auth: Buffer }>();
  const waiters: { test: (p: ReceivedPush) => boolean; resolve: (p: ReceivedPush) => void }[] = [];
  let origin = '';
  const svc: PushService = {
    url: '',
    agent: new Agent({ ca: pem.cert }),
    received: [],
    status: {},
    subscribe(id) {
      const ua = createECDH('prime256v1');
      ua.generateKeys();
      const auth = randomBytes(16);
      subs.set(id, { ua, auth });
      return { endpoint: `${svc.url}/push/${id}`, keys: { p256dh: b64u(ua.getPublicKey()), auth: b64u(auth) } };
    },
    next(test) {
      const hit = svc.received.find(test);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        rmSync(dir, { recursive: true, force: true });
      }),
  };
  const server = createServer(pem, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (req.url ?? '').replace(/^\/push\//, '');
      const sub = subs.get(id);
      const vapid = checkVapid(req.headers.authorization, origin);
      if (!sub || req.headers['content-encoding'] !== 'aes128gcm') {
        res.writeHead(400).end();
        return;
      }
      const push: ReceivedPush = {
        id,
        urgency: req.headers['urgency'] as string | undefined,
        ttl: req.headers['ttl'] as string | undefined,
        vapidKey: vapid.key,
        vapidOk: vapid.ok,
        text: decrypt(Buffer.concat(chunks), sub.ua, sub.auth),
      };
      svc.received.push(push);
      for (const w of [...waiters]) {
        if (!w.test(push)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(push);
      }
      res.writeHead(svc.status[id] ?? 201).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc.url = origin;
  return svc;
}
