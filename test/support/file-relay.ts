// A relay on a SQLite file in a scratch directory, a second connection to that file (its lock and
// triggers are the faults the store tests set), and the history a session has there.
import { DatabaseSync as Database } from 'node:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { SseClient } from './relay-harness.js';

export const FILE_RELAY_TOKEN = 'thread-token';
export const fileRelayAuth = { authorization: `Bearer ${FILE_RELAY_TOKEN}` };
const dirs: string[] = [];

export function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-store-thread-'));
  dirs.push(d);
  return d;
}

/** Removes every directory `freshDir` made. */
export function removeFileRelayDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export async function fileRelay(lines: string[] = []): Promise<{ relay: RelayHandle; path: string }> {
  const path = join(freshDir(), 'relay.db');
  const relay = await startRelay({ port: 0, storePath: path, token: FILE_RELAY_TOKEN, log: (l) => lines.push(l) });
  return { relay, path };
}

/** Every event the relay's history serves for `session`, as text. */
export async function history(relay: RelayHandle, session: string): Promise<string[]> {
  const h = await SseClient.open(relay.url, { from: JSON.stringify([{ session }]), live: '0' }, fileRelayAuth);
  await h.done();
  return h.messages.filter((m) => m.data !== undefined).map((m) => m.data!);
}

/** A second connection to the store's file: its lock (BEGIN IMMEDIATE) and triggers are the faults. */
export function otherConnection(path: string): Database {
  const db = new Database(path);
  // Waits for the writer's lock instead of failing on it (node:sqlite's connections wait for none unless told).
  db.exec('PRAGMA busy_timeout = 5000');
  return db;
}
