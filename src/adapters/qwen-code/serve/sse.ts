// Follows one daemon session's SSE stream (`GET /session/:id/events`): parses its frames into
// envelopes and, when the stream ends or fails, reconnects with `Last-Event-ID` so the daemon
// replays what was missed from its ring. Stops on `session_died` (the daemon closes the stream
// for good) or when unsubscribed.
import { Observable } from 'rxjs';
import type { ServeClient } from './client.js';
import { parseServeEvent, type ServeEvent } from './maps.js';

/** Splits SSE text into the `data` of each complete frame; returns what is left for the next chunk. */
export function sseData(buffer: string): { frames: string[]; rest: string } {
  const parts = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = parts.pop() ?? '';
  const frames = parts.flatMap((frame) => {
    const data = frame
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
    return data.length === 0 ? [] : [data.join('\n')];
  });
  return { frames, rest };
}

/** Frames that end the stream for good (observed on 0.24.4: the agent child died, the client was evicted). */
const TERMINAL = new Set(['session_died']);

export interface FollowOptions {
  /** First reconnect delay, doubled up to `maxRetryMs` while the stream keeps failing. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Called once each time the stream is open (after a reconnect too). */
  onOpen?: () => void;
}

export function followSession(client: ServeClient, session: string, o: FollowOptions = {}): Observable<ServeEvent> {
  const first = o.retryMs ?? 250;
  const max = o.maxRetryMs ?? 5000;
  return new Observable<ServeEvent>((sub) => {
    const ctl = new AbortController();
    let last: number | undefined;
    let delay = first;
    let timer: NodeJS.Timeout | undefined;
    const run = async (): Promise<void> => {
      try {
        const res = await client.events(session, last, ctl.signal);
        if (res.status !== 200 || res.body === null) {
          await res.body?.cancel().catch(() => {});
          if (res.status === 404) return sub.complete();
          throw new Error(`HTTP ${res.status}`);
        }
        o.onOpen?.();
        delay = first;
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          const { frames, rest } = sseData(buffer + decoder.decode(chunk, { stream: true }));
          buffer = rest;
          for (const data of frames) {
            const e = parseServeEvent(data);
            if (e === undefined) continue;
            if (e.id !== undefined) last = e.id;
            sub.next(e);
            if (TERMINAL.has(e.type)) return sub.complete();
          }
        }
      } catch {
        // Reconnects below: the lane's discovery decides whether the daemon or the session is gone.
      }
      if (ctl.signal.aborted || sub.closed) return;
      timer = setTimeout(() => void run(), delay);
      delay = Math.min(delay * 2, max);
    };
    void run();
    return () => {
      ctl.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  });
}
