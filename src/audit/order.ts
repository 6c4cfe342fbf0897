// Identity across every file of one audit: one (source, id) never carries two different contents
// (AEP-0001 §5.3), while an identical copy is a legal redelivery (the same event in an adapter log
// and in a relay export, or a re-sent ack). Position rules per file live in protocol/stream-checks.
import { createHash } from 'node:crypto';
import { dedupeKey, type AepEvent } from '../protocol/envelope.js';

type OrderRule = 'id-conflict';

export interface OrderIssue {
  rule: OrderRule;
  message: string;
}

/** Canonical JSON (sorted keys), so a relay that re-serialises an event does not look like a conflict. */
function canonical(value: unknown): string {
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
    return {
      rule: 'id-conflict',
      message: `id ${e.id} from ${e.source} was already used for a different event (AEP-0001 §5.3)`,
    };
  }
}
