// Two relay nodes on one JetStream fabric, as the cross-node command tests set them up: a raw
// target claiming a fresh session on node B and a raw sender on node A subscribed to it, once
// A knows of the claim.
import { emitterFor, freshSession, WsPeer } from './relay-harness.js';

/**
 * Target on `bSocket`, sender (and watchers) on the given sockets, all subscribed to the session
 * once its start went through; resolved when the sender's node lists the claim (it crossed
 * through the claims bucket).
 */
export async function crossingSession(
  o: { aSocket: string; bSocket: string; token: string; type: string; prefix: string },
  watchers: string[] = [],
) {
  const s = freshSession(o.prefix);
  const em = emitterFor(s, 'test-agent');
  const target = await WsPeer.target(o.bSocket, 'test-agent', [o.type], o.token);
  const sender = await WsPeer.greet(o.aSocket, { role: 'consumer' }, o.token);
  const others = await Promise.all(watchers.map((url) => WsPeer.greet(url, { role: 'consumer' }, o.token)));
  for (const p of [sender, ...others]) {
    p.send({ type: 'subscribe', id: 'w', filter: { session: s } });
    await p.next((f) => f.type === 'subscribed');
  }
  target.send(em.emit({ type: 'session.started' }));
  await sender.next((f) => f.type === 'session.started');
  for (let i = 0; i < 100; i++) {
    sender.send({ type: 'roster', id: `r${i}` });
    const r = await sender.next((f) => f.type === 'roster' && f.id === `r${i}`);
    if ((r.entries as { session: string }[]).some((e) => e.session === s)) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return { s, em, target, sender, watchers: others };
}
