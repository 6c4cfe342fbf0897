// What the outbox keeps durably beside the log (`<log>.relay`, D23): the log position before
// which the relay holds everything, the per-session position the relay was last seen to hold
// for each session with events after it, and what the relay refused for good. Also the
// position arithmetic the outbox's parts share.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AepEvent } from '../protocol/index.js';
import { isCommandType } from '../protocol/types.js';
import { syncDir, type LogPosition } from './log.js';

export interface Position {
  epoch: number;
  seq: number;
}

export interface OutboxState {
  /** Everything the relay must store lies at or after this log position. */
  confirmed: LogPosition;
  /** Per session with events after `confirmed`: what the relay was last seen to hold. */
  sessions: Record<string, Position>;
  /** Per session: the relay refused for good its events up to here (none of them is sent again). */
  refused?: Record<string, Position>;
}

export const after = (a: Position, b: Position): boolean => a.epoch > b.epoch || (a.epoch === b.epoch && a.seq > b.seq);
/** A session event's position; commands and agent-scoped events have none the relay keeps. */
export const posOf = (e: AepEvent): Position | undefined =>
  e.session !== undefined && e.seq !== undefined && !isCommandType(e.type)
    ? { epoch: e.epoch ?? 0, seq: e.seq }
    : undefined;
export const cmpLog = (a: LogPosition, b: LogPosition): number => a.gen - b.gen || a.offset - b.offset;

export function readOutboxState(path: string): OutboxState | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const s = JSON.parse(readFileSync(path, 'utf8')) as OutboxState;
    if (
      typeof s?.confirmed?.gen === 'number' &&
      typeof s.confirmed.offset === 'number' &&
      typeof s.sessions === 'object' &&
      (s.refused === undefined || typeof s.refused === 'object')
    )
      return s;
  } catch {
    // An unreadable state file only costs a longer resend: the relay dedupes.
  }
  return undefined;
}

/** Writes `text` to `path` so a crash leaves the old or the new content, never a mix. */
export function writeFileDurably(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  const fd = openSync(tmp, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDir(dirname(path));
}
