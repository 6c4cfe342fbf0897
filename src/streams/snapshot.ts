// Snapshots (D24): every session cell as the machine's persisted snapshot, with its queue,
// in-flight journal and dedupe records inside its context, plus the host's next epochs, recorded
// acks and orphan decisions, and each session's last event (its claim after a restart). A
// snapshot names the generation it precedes: start = snapshot + that generation's segment, so
// the time to answering hooks depends on live state and one segment, not on history.
import { existsSync, readFileSync } from 'node:fs';
import { SteeringError } from '../protocol/index.js';
import type { AckDecision, SessionContext } from '../machines/session-context.js';

/** A session cell as a snapshot holds it: the machine's persisted snapshot (D24). */
export interface PersistedCell {
  session: string;
  snapshot: { value: unknown; context: SessionContext; status?: string };
}

/** Everything a host holds beyond its log, for a snapshot (D24). */
export interface HostState {
  cells: PersistedCell[];
  /** The epoch each session's next process starts at (D11). */
  epochs: [string, number][];
  /** Recorded acks, byte for byte (D4). */
  acks: [string, string][];
  orphans: [string, Record<string, AckDecision>][];
}

export interface SnapshotFile {
  v: 1;
  /** The generation whose segment continues this snapshot. */
  generation: number;
  host: HostState;
  /** Each session's last event, as logged. */
  last: Record<string, string>;
}

export const snapshotText = (generation: number, host: HostState, last: Record<string, string>): string =>
  JSON.stringify({ v: 1, generation, host, last } satisfies SnapshotFile);

const isSnapshot = (v: unknown): v is SnapshotFile => {
  const s = v as Partial<SnapshotFile> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    s.v === 1 &&
    Number.isInteger(s.generation) &&
    typeof s.host === 'object' &&
    Array.isArray(s.host?.cells) &&
    Array.isArray(s.host?.epochs) &&
    Array.isArray(s.host?.acks) &&
    typeof s.last === 'object'
  );
};

/** The snapshot at `path`, or undefined (none yet, or unreadable: reported, and the segments are replayed instead). */
export function readSnapshot(path: string, onError: (e: SteeringError) => void): SnapshotFile | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const v: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (isSnapshot(v)) return v;
    onError(
      new SteeringError(
        'LOG_TORN_RECORD',
        `snapshot ${path} is not one this adapter wrote; replaying the kept segments instead`,
      ),
    );
  } catch (cause) {
    onError(
      new SteeringError('LOG_TORN_RECORD', `snapshot ${path} is unreadable; replaying the kept segments instead`, {
        cause,
      }),
    );
  }
  return undefined;
}
