// Stream-level checks the audit applies to every file: `(epoch, seq)` never goes back within one
// emitter's session (AEP-0001 §7), one position never names two events, and one (source, id)
// never carries two different contents (AEP-0001 §5.3). Redelivery of the same event is legal.
import { createHash } from 'node:crypto';
import { dedupeKey, type AepEvent } from '../protocol/envelope.js';

export type OrderRule = 'seq-regression' | 'epoch-regression' | 'seq-conflict' | 'id-conflict';

export interface OrderIssue {
  rule: OrderRule;
  message: string;
}

/** Canonical JSON (sorted keys), so a relay that re-serialises an event does not look like a conflict. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const digest = (e: AepEvent): string => createHash('sha256').update(canonical(e)).digest('base64');

/** Content digests by (source, id), shared across every file of one audit. */
export class IdLedger {
  private readonly digests = new Map<string, string>();

  /** 'new', 'repeat' (identical redelivery) or an issue for a conflicting reuse of the id. */
  see(e: AepEvent): 'new' | 'repeat' | OrderIssue {
    const key = dedupeKey(e);
    const d = digest(e);
    const prior = this.digests.get(key);
    if (prior === undefined) {
      this.digests.set(key, d);
      return 'new';
    }
    if (prior === d) return 'repeat';
    return { rule: 'id-conflict', message: `id ${e.id} from ${e.source} was already used for a different event (AEP-0001 §5.3)` };
  }
}

/** Positions per emitter session within one file. */
export class PositionTrack {
  private readonly high = new Map<string, { epoch: number; seq: number }>();
  private readonly byPosition = new Map<string, string>();

  /** Checks a newly seen (not redelivered) sequenced event. */
  see(e: AepEvent): OrderIssue | undefined {
    if (typeof e.session !== 'string' || typeof e.seq !== 'number') return undefined;
    const epoch = typeof e.epoch === 'number' ? e.epoch : 0;
    const stream = `${e.source}\u0000${e.session}`;
    const pos = `${stream}\u0000${epoch}\u0000${e.seq}`;
    const holder = this.byPosition.get(pos);
    if (holder !== undefined && holder !== e.id) {
      return { rule: 'seq-conflict', message: `(epoch ${epoch}, seq ${e.seq}) of session ${e.session} already names event ${holder} (AEP-0001 §7)` };
    }
    this.byPosition.set(pos, e.id);
    const last = this.high.get(stream);
    if (last) {
      if (epoch < last.epoch) {
        return { rule: 'epoch-regression', message: `epoch ${epoch} after epoch ${last.epoch} in session ${e.session} (AEP-0001 §7)` };
      }
      if (epoch === last.epoch && e.seq <= last.seq) {
        return { rule: 'seq-regression', message: `seq ${e.seq} after seq ${last.seq} in epoch ${epoch} of session ${e.session} (AEP-0001 §7)` };
      }
    }
    this.high.set(stream, { epoch, seq: e.seq });
    return undefined;
  }
}
