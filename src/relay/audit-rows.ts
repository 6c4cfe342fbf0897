// D47: what a remote `aep-steer audit --verify --relay URL` reads: the store's rows with their
// chain places, the places evicted rows left, the signed checkpoints and the heads, a page at a
// time (`GET /audit/rows?part=…&after=…`), so a large store never holds up the relay's thread
// for long. Every row is served whole, whatever capture it was stored at: only an identity with
// the `audit` right reads it.
import type { SqlDatabase, SqlValue } from './sqlite.js';

export const AUDIT_PARTS = ['rows', 'gone', 'checkpoints', 'heads'] as const;
export type AuditPart = (typeof AUDIT_PARTS)[number];

/** One page of a part; `next`: pass it as `after` for the next page, absent on the last. */
export interface AuditPage {
  part: AuditPart;
  items: Record<string, unknown>[];
  next?: string;
}

/** Rows per page: a few MB of JSON at most. */
export const AUDIT_PAGE = 2000;

/** Each part's keyset query: the rows after a cursor, in the order the verifier walks them. */
const QUERIES: Record<AuditPart, { sql: string; cursor: (row: Record<string, unknown>) => unknown[] }> = {
  rows: {
    sql: 'SELECT arrival, source, n, prev, raw FROM events WHERE arrival > ? ORDER BY arrival LIMIT ?',
    cursor: (r) => [r.arrival],
  },
  gone: {
    sql: 'SELECT source, n, prev FROM chain_gone WHERE (source, n) > (?, ?) ORDER BY source, n LIMIT ?',
    cursor: (r) => [r.source, r.n],
  },
  checkpoints: { sql: 'SELECT k, raw FROM checkpoints WHERE k > ? ORDER BY k LIMIT ?', cursor: (r) => [r.k] },
  heads: {
    sql: 'SELECT source, n, head FROM chain_heads WHERE source > ? ORDER BY source LIMIT ?',
    cursor: (r) => [r.source],
  },
};

/** Where each part starts: before every key. */
const START: Record<AuditPart, unknown[]> = { rows: [-1], gone: ['', -1], checkpoints: [-1], heads: [''] };

/** A cursor as the client sees it: opaque text. */
const encode = (key: unknown[]): string => Buffer.from(JSON.stringify(key)).toString('base64url');

/** The cursor back, or undefined when it is not one this module made for `part`. */
function decode(part: AuditPart, after: string | null): unknown[] | undefined {
  if (after === null || after === '') return START[part];
  try {
    const key = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as unknown;
    const ok =
      Array.isArray(key) &&
      key.length === START[part].length &&
      key.every((v, i) => typeof v === typeof START[part][i]);
    return ok ? key : undefined;
  } catch {
    return undefined;
  }
}

/** Reads one page; undefined when the cursor is not valid for the part. */
export function readAuditPage(db: SqlDatabase, part: AuditPart, after: string | null): AuditPage | undefined {
  const key = decode(part, after);
  if (key === undefined) return undefined;
  const q = QUERIES[part];
  const items = db.prepare(q.sql).all(...(key as SqlValue[]), AUDIT_PAGE) as Record<string, unknown>[];
  const last = items[items.length - 1];
  // Plain objects: the binding's rows have no prototype.
  const page: AuditPage = { part, items: items.map((r) => ({ ...r })) };
  if (items.length === AUDIT_PAGE && last !== undefined) page.next = encode(q.cursor(last));
  return page;
}
