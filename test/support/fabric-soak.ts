// A bounded steering load across relay nodes with one fault in the middle, and its figures: a
// real adapter (fake surface) linked to the given relay URLs, hooks arriving as an agent's would,
// a consumer sending instructions at a steady pace and retrying each with the same id until it
// settles. Counted: accepted, delivered once / twice / lost (each instruction's text in the hook
// replies), refusals by code, and the recovery time (the longest time after the fault ended
// with no instruction accepted). The history check compares the relay's replay of each session
// with the adapter's own log: every logged event once, nothing else.
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { RelayConsumer, type Settlement } from '../../src/consumer/connection.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { readEventLog } from '../../src/streams/log.js';
import { acceptsFor } from '../../src/streams/run.js';
import { adapter, type TestAdapter } from './adapter.js';
import { fakeSurface, hookBody } from './fake-surface.js';
import { freshSession } from './relay-harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SoakOptions {
  label: string;
  token: string;
  /** The adapter's relay URLs, comma-separated (its own node first). */
  adapterRelay: string;
  consumerRelay: string;
  sessions: number;
  instructions: number;
  /** Pause between two instructions sent. */
  everyMs: number;
  /** Started (not awaited) when instruction `at` is sent; resolves when the fault is over. */
  fault: { at: number; run: () => Promise<void> };
  /** How long one attempt waits for its ack before the same command is sent again. */
  attemptMs?: number;
}

interface SoakFigures {
  label: string;
  sent: number;
  accepted: number;
  once: number;
  twice: number;
  lost: number;
  retried: number;
  refused: Record<string, number>;
  /** Longest wait for a `store-unavailable` refusal, from its attempt's send. */
  slowestRefusalMs: number;
  recoveryMs: number;
  faultMs: number;
}

export interface Soak {
  figures: SoakFigures;
  adapter: TestAdapter;
  sessions: string[];
  consumer: RelayConsumer;
  /** Every accepted instruction's `delivered` event, as the consumer saw it. */
  deliveredSeen: number;
  /** The `delivered` events the adapter emitted that the consumer never saw: `id@seq (cause)`. */
  deliveriesUnseen: string[];
  /** Each instruction's settlement, by command id. */
  settled: Map<string, Settlement>;
  close(): Promise<void>;
}

/** Soaks not closed yet (a failed assertion skips a test's own close): `closeSoaks` in `test.after`. */
const open = new Set<() => Promise<void>>();

export async function closeSoaks(): Promise<void> {
  await Promise.all([...open].map((c) => c()));
}

export async function runSoak(o: SoakOptions): Promise<Soak> {
  const surface = fakeSurface();
  const link = connectRelay({
    url: o.adapterRelay,
    token: o.token,
    agent: surface.token,
    accepts: acceptsFor(surface, true),
    backoffInitialMs: 100,
    backoffMaxMs: 500,
  });
  const a = await adapter({ surface, relay: link });
  let consumer: RelayConsumer | undefined;
  const close = async () => {
    open.delete(close);
    await consumer?.close();
    await a.handle.close();
  };
  open.add(close);
  const sessions = Array.from({ length: o.sessions }, () => freshSession());
  for (const s of sessions) await a.post(hookBody('SessionStart', s));

  const c = await RelayConsumer.connect({ url: o.consumerRelay, token: o.token, agent: 'test-cli' });
  consumer = c;
  // The adapter's claims reach the consumer's node through the claims bucket: a command sent
  // before that node heard them is `no-route` there, as it would be before any claim.
  for (let i = 0; i < 100; i++) {
    const listed = new Set((await c.roster()).map((e) => e.session));
    if (sessions.every((s) => listed.has(s))) break;
    await sleep(100);
  }
  const seen: AepEvent[] = [];
  await c.subscribe({ filter: { session: sessions } }, { onEvent: (e) => seen.push(e) });

  const replies: string[] = [];
  let hooking = true;
  const hooks = (async () => {
    while (hooking) {
      for (const s of sessions) {
        try {
          replies.push((await a.post(hookBody('UserPromptSubmit', s))).text);
        } catch {
          // the adapter is never down here; a refused connection would show as a lost instruction
        }
      }
      await sleep(20);
    }
  })();

  const texts = new Map<string, string>();
  const settled = new Map<string, Settlement>();
  const attempts = new Map<string, number>();
  const refused: Record<string, number> = {};
  const acceptedAt: number[] = [];
  let slowestRefusalMs = 0;
  const send = async (i: number) => {
    const s = sessions[i % o.sessions]!;
    const text = `instruction ${i} of ${o.label}`;
    const cmd = command({ agent: 'test-cli', host: 'h' }, s, {
      type: surface.steeringType,
      capture: 'redacted',
      data: { text },
    });
    texts.set(cmd.id, text);
    const until = Date.now() + 60_000;
    for (let n = 1; Date.now() < until; n++) {
      attempts.set(cmd.id, n);
      const t0 = Date.now();
      let r: Settlement;
      try {
        r = await c.send(cmd, { timeoutMs: o.attemptMs ?? 700 });
      } catch {
        // the consumer's node went away: its link moves on, the retry follows
        await sleep(150);
        continue;
      }
      if (r.outcome === 'accepted' || r.outcome === 'rejected') {
        settled.set(cmd.id, r);
        if (r.outcome === 'rejected')
          refused[`rejected ${r.reason}: ${r.detail ?? ''}`] =
            (refused[`rejected ${r.reason}: ${r.detail ?? ''}`] ?? 0) + 1;
        if (r.outcome === 'accepted') acceptedAt.push(Date.now());
        return;
      }
      if (r.outcome === 'refused') {
        refused[r.code] = (refused[r.code] ?? 0) + 1;
        if (r.code === 'store-unavailable') slowestRefusalMs = Math.max(slowestRefusalMs, Date.now() - t0);
      }
      await sleep(150);
    }
  };
  const senders: Promise<void>[] = [];
  let fault: Promise<void> | undefined;
  let faultStart = 0;
  let faultEnd = 0;
  for (let i = 0; i < o.instructions; i++) {
    senders.push(send(i));
    if (i === o.fault.at) {
      faultStart = Date.now();
      fault = o.fault.run().then(() => {
        faultEnd = Date.now();
      });
    }
    await sleep(o.everyMs);
  }
  await fault;
  await Promise.all(senders);

  const deliveredType = `x.${surface.token}.instruction.delivered`;
  const carried = (text: string) => replies.reduce((n, r) => n + r.split(text).length - 1, 0);
  for (let i = 0; i < 300; i++) {
    const ids = [...settled].filter(([, r]) => r.outcome === 'accepted').map(([id]) => id);
    if (ids.every((id) => carried(texts.get(id)!) > 0 && seen.some((e) => e.type === deliveredType && e.cause === id)))
      break;
    await sleep(50);
  }
  hooking = false;
  await hooks;

  let once = 0;
  let twice = 0;
  let lost = 0;
  let accepted = 0;
  let deliveredSeen = 0;
  const deliveriesUnseen: string[] = [];
  for (const [id, text] of texts) {
    const n = carried(text);
    if (settled.get(id)?.outcome === 'accepted') accepted += 1;
    if (n === 1) once += 1;
    else if (n > 1) twice += 1;
    else lost += 1;
    if (seen.some((e) => e.type === deliveredType && e.cause === id)) deliveredSeen += 1;
    else
      for (const e of a.events)
        if (e.type === deliveredType && e.cause === id) deliveriesUnseen.push(`${e.id}@${e.seq} (${id})`);
  }
  acceptedAt.sort((x, y) => x - y);
  let recoveryMs = 0;
  let prev = faultEnd;
  for (const t of acceptedAt) {
    if (t <= faultEnd) continue;
    recoveryMs = Math.max(recoveryMs, t - Math.max(prev, faultEnd));
    prev = t;
  }
  if (!acceptedAt.some((t) => t > faultEnd)) recoveryMs = Infinity;
  const figures: SoakFigures = {
    label: o.label,
    sent: o.instructions,
    accepted,
    once,
    twice,
    lost,
    retried: [...attempts.values()].filter((n) => n > 1).length,
    refused,
    slowestRefusalMs,
    recoveryMs,
    faultMs: faultEnd - faultStart,
  };
  const codes =
    Object.entries(refused)
      .map(([c, n]) => `${c} ${n}`)
      .join(', ') || 'none';
  console.log(
    `${o.label}: accepted ${accepted}/${o.instructions}, delivered once ${once}, twice ${twice}, lost ${lost}; ` +
      `${figures.retried} retried, refusals: ${codes} (slowest store-unavailable ${slowestRefusalMs} ms); ` +
      `fault ${(figures.faultMs / 1000).toFixed(1)} s, recovery ${(recoveryMs / 1000).toFixed(1)} s`,
  );
  return {
    figures,
    adapter: a,
    sessions,
    consumer: c,
    deliveredSeen,
    deliveriesUnseen,
    settled,
    close,
  };
}

/** Nothing lost or delivered twice, every instruction accepted and its delivery seen, recovery within `boundMs`. */
export function assertSoak(s: Soak, boundMs: number): void {
  const f = s.figures;
  assert.is(f.lost, 0, `${f.label}: ${f.lost} instructions lost`);
  assert.is(f.twice, 0, `${f.label}: ${f.twice} instructions delivered twice`);
  assert.is(f.accepted, f.sent, `${f.label}: ${f.sent - f.accepted} instructions never accepted`);
  assert.is(
    s.deliveredSeen,
    f.sent,
    `${f.label}: the sender saw ${s.deliveredSeen} of ${f.sent} deliveries; not seen: ${s.deliveriesUnseen.join(', ')}`,
  );
  assert.ok(f.recoveryMs <= boundMs, `${f.label}: recovery took ${f.recoveryMs} ms, bound ${boundMs} ms`);
}

/** The relay's history of one session (SSE replay, `live=0`). */
async function history(relayUrl: string, token: string, session: string): Promise<AepEvent[]> {
  const q = new URLSearchParams({ live: '0', filter: JSON.stringify({ session }) });
  const res = await fetch(`${relayUrl}/stream?${q}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as AepEvent);
}

/**
 * After the fault, the relay holds every sequenced event the adapter logged for its sessions,
 * each once (no hole, no duplicate), waiting while the adapter's resends catch up.
 */
export async function assertHistoryMatchesLog(
  s: Soak,
  relayUrl: string,
  token: string,
  waitMs = 15_000,
): Promise<{ events: number }> {
  const logged = new Map<string, string[]>();
  let sources = new Set<string>();
  let diff = '';
  const until = Date.now() + waitMs;
  for (;;) {
    logged.clear();
    sources = new Set();
    readEventLog(s.adapter.logPath, (r) => {
      if (r.k !== 'ev' || r.e.session === undefined || r.e.seq === undefined || !s.sessions.includes(r.e.session))
        return;
      sources.add(r.e.source);
      const ids = logged.get(r.e.session) ?? [];
      ids.push(r.e.id);
      logged.set(r.e.session, ids);
    });
    diff = '';
    for (const session of s.sessions) {
      const want = logged.get(session) ?? [];
      const held = (await history(relayUrl, token, session))
        .filter((e) => e.seq !== undefined && sources.has(e.source))
        .map((e) => e.id);
      const counts = new Map<string, number>();
      for (const id of held) counts.set(id, (counts.get(id) ?? 0) + 1);
      const missing = want.filter((id) => !counts.has(id));
      const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      const extra = held.filter((id) => !want.includes(id));
      if (missing.length + twice.length + extra.length > 0) {
        diff += `${session}: ${missing.length} missing, ${twice.length} twice, ${extra.length} not in the log; `;
      }
    }
    if (diff === '' || Date.now() > until) break;
    await sleep(250);
  }
  assert.is(diff, '', `history differs from the adapter's log: ${diff}`);
  return { events: [...logged.values()].reduce((n, l) => n + l.length, 0) };
}
