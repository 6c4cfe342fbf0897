// The outbox (D23) against a scripted relay link: backpressure never loses an event and never
// holds a hook; after a hello only what the relay lacks is resent; ended sessions are claimed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { readEventLog } from '../../src/streams/log.js';
import type { RelayLink } from '../../src/streams/relay-link.js';
import { adapter } from '../support/adapter.js';
import { hookBody } from '../support/fake-surface.js';

class ScriptedLink {
  up = false;
  buffered = 0;
  readonly written: Record<string, unknown>[] = [];
  readonly state$ = new Subject<boolean>();
  readonly frames$ = new Subject<Record<string, unknown>>();
  readonly link: RelayLink = {
    commands$: new Subject<AepCommand>(),
    state$: this.state$,
    frames$: this.frames$,
    write: (text) => {
      if (!this.up) return false;
      this.written.push(JSON.parse(text) as Record<string, unknown>);
      return true;
    },
    buffered: () => this.buffered,
    close: () => Promise.resolve(),
  };
  hello(): void {
    this.up = true;
    this.state$.next(true);
  }
  down(): void {
    this.up = false;
    this.state$.next(false);
  }
}
const scriptedLink = () => new ScriptedLink();

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const positioned = (path: string): AepEvent[] =>
  readEventLog(path).records.flatMap((r) => (r.k === 'ev' && r.e.seq !== undefined ? [r.e] : []));
const events = (frames: Record<string, unknown>[]) =>
  frames.filter((f) => typeof f.type === 'string' && (f.type as string).includes('.')) as unknown as AepEvent[];

test('D23 backpressure: a full socket buffer holds nothing back from hooks and loses no event; the log drains in order', async () => {
  const l = scriptedLink();
  const a = await adapter({ relay: l.link });
  try {
    l.hello();
    await wait(10);
    l.buffered = 64 << 20;
    for (let i = 0; i < 100; i += 1) {
      const r = await a.post(hookBody('SessionStart', `bp-${i}`));
      assert.is(r.status, 200, 'every hook answered while the relay is slow');
    }
    assert.is(events(l.written).length, 0, 'nothing written past the high-water mark');
    l.buffered = 0;
    for (let i = 0; i < 100 && events(l.written).length < 100; i += 1) await wait(20);
    assert.equal(
      events(l.written).map((e) => e.id),
      positioned(a.logPath).map((e) => e.id),
      'every logged event, once, in log order',
    );
  } finally {
    await a.handle.close();
  }
});

test('D23 on a hello the relay is asked what it stored; only the rest is resent, and every other session (ended too) is claimed once', async () => {
  const l = scriptedLink();
  const a = await adapter({ relay: l.link });
  try {
    for (const s of ['h-1', 'h-2', 'h-3']) await a.post(hookBody('SessionStart', s));
    await a.post(hookBody('SessionEnd', 'h-3'));
    await a.post(hookBody('PreToolUse', 'h-1'));
    const logged = positioned(a.logPath);
    l.hello();
    await wait(10);
    const query = l.written.find((f) => f.type === 'subscribe') as {
      id: string;
      from: { session: string; epoch: number; seq: number }[];
      filter: unknown;
    };
    assert.ok(query, 'a position query was sent');
    assert.equal(query.filter, { agent: 'claude-code' });
    assert.equal(query.from.map((p) => p.session).sort(), ['h-1', 'h-2', 'h-3']);
    assert.equal(events(l.written), [], 'nothing sent while the answer is pending');
    // The relay holds h-2 and h-3 whole and h-1 up to its first event.
    const h1 = logged.filter((e) => e.session === 'h-1');
    for (const e of [...logged.filter((x) => x.session !== 'h-1'), h1[0]!])
      l.frames$.next(e as unknown as Record<string, unknown>);
    l.frames$.next({ type: 'unsubscribed', id: query.id });
    await wait(30);
    const lastOf = (s: string) => logged.filter((e) => e.session === s).at(-1)!.id;
    const sent = events(l.written).map((e) => e.id);
    assert.equal(
      sent.slice(0, h1.length - 1),
      h1.slice(1).map((e) => e.id),
      'first only what the relay lacks, in order',
    );
    assert.equal(
      sent.slice(h1.length - 1).sort(),
      [lastOf('h-2'), lastOf('h-3')].sort(),
      'then one claim for each session the resend did not touch, the ended one too',
    );
    // A second hello, the relay now holding everything: nothing resent, one claim frame per session, ended h-3
    // included.
    l.down();
    l.written.length = 0;
    l.hello();
    await wait(10);
    const again = l.written.find((f) => f.type === 'subscribe') as { id: string };
    for (const e of logged) l.frames$.next(e as unknown as Record<string, unknown>);
    l.frames$.next({ type: 'unsubscribed', id: again.id });
    await wait(30);
    const claims = events(l.written);
    assert.equal(claims.map((e) => e.session).sort(), ['h-1', 'h-2', 'h-3']);
    for (const c of claims) assert.is(c.id, lastOf(c.session!), 'each session claimed by its last event');
  } finally {
    await a.handle.close();
  }
});

test.run();
