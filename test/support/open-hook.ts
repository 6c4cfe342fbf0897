// A hook call held open on its own socket, as a vendor's hook process makes it: `abort()` closes
// the socket without a reply, as a vendor does when it kills the hook (D34).
import { request } from 'node:http';

export interface OpenHook {
  abort(): void;
  /** The reply body, once the adapter writes one; rejects when the socket was closed first. */
  reply: Promise<string>;
}

export function openHook(url: string, body: unknown): OpenHook {
  const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
  const reply = new Promise<string>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
  });
  reply.catch(() => undefined);
  req.end(JSON.stringify(body));
  return { abort: () => req.destroy(), reply };
}
