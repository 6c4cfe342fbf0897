// D47: checks an adapter log's hash chain across every generation still on disk: the oldest kept
// file starts from the head its header names (what compaction removed before it, D24), each
// later header must continue the file before it, and every record must link to the one before.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { FIRST, lineHash, verifyLogHead, type ChainHead } from '../protocol/chain.js';
import { archivedGenerations, segmentPath } from '../streams/log.js';
import { walkChain, type ChainBreak, type Link } from './chain-walk.js';

export interface LogVerdict {
  /** The log's path, the one chain it holds. */
  chain: string;
  files: string[];
  /** Records checked; records an older version wrote without chain keys are counted apart. */
  records: number;
  unlinked: number;
  /** Where the chain starts: the first record, or the head a compaction left in the oldest header. */
  start: ChainHead;
  breaks: ChainBreak[];
  /** Generation headers whose head the adapter's key signed, and those checked against a key. */
  signed: number;
  checked: number;
  /** A header whose signature does not verify, or a compacted start no signature vouches for. */
  badHeads: { id: string; detail: string }[];
}

interface Scan {
  links: Link[];
  unlinked: number;
  breaks: ChainBreak[];
  start?: ChainHead;
  /** The head the last file ended on, which the next file's header must name. */
  end?: ChainHead;
  headers: Header[];
}

/** A generation header as read: where, its generation and head, and its signature if any. */
interface Header {
  at: string;
  g: number;
  head: ChainHead;
  s?: string;
}

/** The files of a log, oldest generation first, the active file last. */
function logFiles(path: string): string[] {
  const list = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);
  return [...archivedGenerations(path, list).map((g) => segmentPath(path, g)), ...(existsSync(path) ? [path] : [])];
}

type Parsed = { k?: unknown; n?: unknown; p?: unknown; g?: unknown; h?: unknown; s?: unknown };

function scanFile(file: string, scan: Scan, first: boolean): void {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  // After the last line end: nothing, or a torn write (LOG_TORN_RECORD), not an edit.
  lines.pop();
  const name = basename(file);
  lines.forEach((line, idx) => {
    const at = `${name}:${idx + 1}`;
    let v: Parsed;
    try {
      v = JSON.parse(line) as Parsed;
    } catch {
      scan.breaks.push({ chain: file, kind: 'changed', at, n: 0, detail: 'the line is not a readable record' });
      return;
    }
    if (v.k === 'seg') {
      header(v, at, file, scan, first && idx === 0);
      return;
    }
    if (v.k === 'mark') return;
    if (typeof v.n !== 'number' || typeof v.p !== 'string') {
      if (scan.links.length === 0) scan.unlinked += 1;
      else scan.breaks.push({ chain: file, kind: 'changed', at, n: 0, detail: 'its chain keys are gone' });
      return;
    }
    scan.links.push({ at, n: v.n, p: v.p, h: lineHash(line) });
  });
  const last = scan.links.at(-1);
  if (last !== undefined) scan.end = { n: last.n, head: last.h };
}

/** A generation's header: the start of the oldest kept file, and a link every later file must make. */
function header(v: Parsed, at: string, file: string, scan: Scan, oldest: boolean): void {
  if (typeof v.n !== 'number' || typeof v.h !== 'string') return;
  const named = { n: v.n, head: v.h };
  scan.headers.push({ at, g: Number(v.g), head: named, ...(typeof v.s === 'string' ? { s: v.s } : {}) });
  if (oldest) {
    scan.start = named;
    return;
  }
  const end = scan.end ?? scan.start;
  if (end !== undefined && (end.n !== named.n || end.head !== named.head))
    scan.breaks.push({
      chain: file,
      kind: end.n < named.n ? 'removed' : 'changed',
      at,
      n: named.n,
      detail: `the generation's header names record ${named.n} with another hash than the file before it ends on`,
    });
}

/**
 * Checks the chain of the log at `path` (its archived segments and active file); with the
 * adapter's public `key`, each signed generation header too. A compacted start (the oldest kept
 * header names records before it) must be signed: nothing else vouches for where it starts.
 */
export function verifyLog(path: string, key?: KeyObject): LogVerdict {
  const files = logFiles(path);
  const scan: Scan = { links: [], unlinked: 0, breaks: [], headers: [] };
  files.forEach((f, i) => {
    scanFile(f, scan, i === 0);
  });
  // A log an older version began has no head to start from: its first linked record is taken as it is.
  const start = scan.start ?? (scan.unlinked > 0 ? undefined : FIRST);
  const breaks = [...scan.breaks, ...walkChain(path, scan.links, start ? { start } : {})];
  const badHeads: LogVerdict['badHeads'] = [];
  let checked = 0;
  for (const h of scan.headers) {
    if (h.s === undefined || key === undefined) continue;
    checked += 1;
    if (!verifyLogHead(h.g, h.head, h.s, key))
      badHeads.push({ id: `header ${h.at}`, detail: "its signature does not verify with the adapter's key" });
  }
  const oldest = scan.headers[0];
  if (scan.start !== undefined && scan.start.n > 0 && oldest?.s === undefined)
    badHeads.push({
      id: `header ${oldest?.at ?? files[0]}`,
      detail: `the compacted head it starts from (record ${scan.start.n}) is not signed`,
    });
  const signed = scan.headers.filter((h) => h.s !== undefined).length;
  const records = scan.links.length;
  return {
    chain: path,
    files,
    records,
    unlinked: scan.unlinked,
    start: start ?? FIRST,
    breaks,
    signed,
    checked,
    badHeads,
  };
}
