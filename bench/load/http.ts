// Load generator: HTTP POSTs with `http.request` over one keep-alive socket, one at a time, the
// way an agent fires its hooks. `{ url, bodies: string[], n, warmup, first?: string[] }` answers
// `{ ms: number[] }`, one round trip each, bodies used in turn.
import { Agent, request } from 'node:http';
import { answer, argOf } from '../lib/proc.js';

export const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export function post(url: string, body: string): Promise<{ ms: number; text: string }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

if (process.argv[1]?.endsWith('http.ts')) {
  const arg = argOf<{ url: string; bodies: string[]; n: number; warmup: number; first?: string[] }>();
  for (const b of arg.first ?? []) await post(arg.url, b);
  let k = 0;
  const next = () => arg.bodies[k++ % arg.bodies.length]!;
  for (let i = 0; i < arg.warmup; i += 1) await post(arg.url, next());
  const ms: number[] = [];
  for (let i = 0; i < arg.n; i += 1) ms.push((await post(arg.url, next())).ms);
  agent.destroy();
  answer({ ms });
}
