// A subscription request, as the SSE query and the WS `subscribe` frame carry it (AEP-0003 §3.3,
// §3.5, §6.5), checked once and failing closed: a bad filter, ceiling or `from` is refused with a
// code from the closed set, never widened to match-all.
import { CAPTURE_LEVELS, type AepEvent, type CaptureLevel } from '../protocol/envelope.js';
import { SubscribeError } from '../protocol/errors.js';
import { compileFilter } from '../protocol/filter.js';
import type { Position } from './session-store.js';

/** One resume entry: deliver what `session` holds strictly after `after` (from its start when absent). */
export interface ResumeEntry {
  session: string;
  after?: Position;
}

export interface SubscriptionSpec {
  match: (e: AepEvent) => boolean;
  /** The subscriber's capture ceiling; absent means events pass as emitted. */
  ceiling?: CaptureLevel;
  /** Replay-all (`"all"`) or explicit resume entries; absent means live only. */
  from?: 'all' | ResumeEntry[];
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function parseCeiling(v: unknown): CaptureLevel | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string' && (CAPTURE_LEVELS as readonly string[]).includes(v)) return v as CaptureLevel;
  // Unspecified values are refused rather than guessed (aep-wire §8.9).
  throw new SubscribeError('invalid-filter', `capture must be one of ${CAPTURE_LEVELS.join(', ')}`);
}

export function parseFrom(v: unknown, maxFrom: number): 'all' | ResumeEntry[] | undefined {
  if (v === undefined) return undefined;
  if (v === 'all') return 'all';
  if (!Array.isArray(v))
    throw new SubscribeError('invalid-filter', 'from must be an array of {session, epoch, seq} or "all"');
  if (v.length > maxFrom)
    throw new SubscribeError('limit-exceeded', `from holds ${v.length} positions; the limit is ${maxFrom}`);
  return v.map((p, i): ResumeEntry => {
    const o = p as Record<string, unknown> | null;
    if (typeof o !== 'object' || o === null || typeof o.session !== 'string' || o.session === '') {
      throw new SubscribeError('invalid-filter', `from[${i}] needs a session`);
    }
    if (o.epoch !== undefined && !(isInt(o.epoch) && o.epoch >= 0))
      throw new SubscribeError('invalid-filter', `from[${i}].epoch must be an integer >= 0`);
    if (o.seq !== undefined && !(isInt(o.seq) && o.seq >= -1))
      throw new SubscribeError('invalid-filter', `from[${i}].seq must be an integer >= -1`);
    // A missing seq means the start of that epoch.
    return {
      session: o.session,
      after: { epoch: (o.epoch as number | undefined) ?? 0, seq: (o.seq as number | undefined) ?? -1 },
    };
  });
}

export function parseSubscription(
  req: { filter?: unknown; capture?: unknown; from?: unknown },
  maxFrom: number,
): SubscriptionSpec {
  let match: (e: AepEvent) => boolean;
  try {
    match = compileFilter(req.filter ?? {});
  } catch (err) {
    throw new SubscribeError('invalid-filter', (err as Error).message);
  }
  const spec: SubscriptionSpec = { match };
  const ceiling = parseCeiling(req.capture);
  if (ceiling !== undefined) spec.ceiling = ceiling;
  const from = parseFrom(req.from, maxFrom);
  if (from !== undefined) spec.from = from;
  return spec;
}

/** `Last-Event-ID: {session}:{epoch}:{seq}`; greedy so a session holding `:` still parses (AEP-0003 §3.3). */
export function parseLastEventId(v: string | undefined): ResumeEntry | undefined {
  const m = /^(.+):(\d+):(\d+)$/.exec(v ?? '');
  return m ? { session: m[1]!, after: { epoch: Number(m[2]), seq: Number(m[3]) } } : undefined;
}

/** The SSE `id:` of an event that has a position. */
export const positionId = (e: AepEvent): string | undefined =>
  e.session !== undefined && e.seq !== undefined ? `${e.session}:${e.epoch ?? 0}:${e.seq}` : undefined;
