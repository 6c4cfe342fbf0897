// Reading one session's recent history from the relay at a capture ceiling (AEP-0003 §3.5, §5):
// a replay subscription, closed once the replay is through. The relay applies the ceiling and
// the field floors (D20); nothing is widened here.
import type { AepEvent, CaptureLevel } from '../protocol/envelope.js';
import type { RelayConsumer } from './connection.js';

export interface HistoryRequest {
  session: string;
  /** The newest this many events are kept. */
  limit: number;
  /** The ceiling asked for; absent, the relay serves the token's own. */
  capture?: CaptureLevel;
  /** Only these event types (exact), when given. */
  types?: string[];
}

export async function sessionHistory(consumer: RelayConsumer, req: HistoryRequest): Promise<AepEvent[]> {
  const seen: AepEvent[] = [];
  const filter: Record<string, unknown> = { session: req.session };
  if (req.types && req.types.length > 0) filter['type'] = req.types;
  const sub = await consumer.subscribe(
    { filter, from: [{ session: req.session }], ...(req.capture === undefined ? {} : { capture: req.capture }) },
    {
      onEvent: (e) => {
        seen.push(e);
        if (seen.length > req.limit * 2) seen.splice(0, seen.length - req.limit);
      },
    },
  );
  // The relay replays in one go right after `subscribed`; a roster round trip behind it is a
  // barrier: its reply arrives after the last replayed event.
  await consumer.roster();
  sub.close();
  return seen.slice(-req.limit);
}
