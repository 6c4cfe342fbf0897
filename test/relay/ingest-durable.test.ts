// What a POST's 202 means survives the group write: a body answered 202 is committed, so a relay
// killed with SIGKILL right after (while other POSTs and socket events are still in flight) still
// holds every event of every body it answered 202, with `stored` counting that body's new events.
// Real relay process, real SQLite file, many concurrent POSTs sharing commits; the file is read
// back with a connection of its own after the kill.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DatabaseSync as Database } from 'node:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { emitterFor, freshSession, ndjson, post, WsPeer } from '../support/relay-harness.js';
import { startRelayNode } from '../support/relay-node.js';

const TOKEN = 'durable-token';
const auth = { authorization: `Bearer ${TOKEN}` };

test('every event of a body answered 202 is in the store after kill -9, whatever shared its commit', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-ingest-durable-'));
  const path = join(dir, 'relay.db');
  const relay = await startRelayNode(['--store', path, '--token', TOKEN], { HOME: dir, AEP_STATE_DIR: dir });
  try {
    // A socket emitter streams all along, so socket events and POSTed bodies share group writes.
    const socket = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'test-agent' } }, TOKEN);
    const streamed = emitterFor(freshSession('durable-ws'));
    let streaming = true;
    const pump = setInterval(() => {
      if (streaming) for (let i = 0; i < 20; i += 1) socket.send(streamed.emit({ type: 'progress.status' }));
    }, 1);

    const answered: { events: AepEvent[]; stored: number }[] = [];
    let refusedAfterKill = 0;
    let killed = false;
    // 16 posters, each its own session, one body after another: one event, or an NDJSON batch of 5.
    const posters = Array.from({ length: 16 }, async (_, k) => {
      const em = emitterFor(freshSession(`durable-http-${k}`));
      for (let i = 0; !killed; i += 1) {
        const events = Array.from({ length: i % 2 === 0 ? 1 : 5 }, () => em.emit({ type: 'progress.status' }));
        try {
          const r = await post(relay.url, ndjson(events), auth);
          if (r.status === 202) answered.push({ events, stored: r.body.stored as number });
          else assert.unreachable(`POST answered ${r.status}: ${JSON.stringify(r.body)}`);
        } catch (err) {
          if (!killed) throw err;
          refusedAfterKill += 1;
        }
      }
    });
    while (answered.length < 400) await new Promise((r) => setTimeout(r, 5));
    // Killed while bodies are in flight, with no chance to finish a write it did not answer.
    killed = true;
    await relay.kill();
    streaming = false;
    clearInterval(pump);
    await Promise.all(posters);
    socket.close();

    const db = new Database(path, { readOnly: true });
    const ids = new Set(
      (db.prepare('SELECT source, id FROM events').all() as { source: string; id: string }[]).map(
        (r) => `${r.source} ${r.id}`,
      ),
    );
    db.close();
    let events = 0;
    for (const a of answered) {
      // Each body was new when posted: its count is its own events, not the commit's.
      assert.is(a.stored, a.events.length);
      for (const e of a.events) {
        events += 1;
        assert.ok(ids.has(`${e.source} ${e.id}`), `event ${e.id} was answered 202 and is not in the store`);
      }
    }
    assert.ok(events >= 400, `${events} events answered 202`);
    process.stdout.write(
      `  ${answered.length} bodies (${events} events) answered 202 before the kill, all in the store; ` +
        `${refusedAfterKill} posts cut by the kill\n`,
    );
  } finally {
    await relay.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
