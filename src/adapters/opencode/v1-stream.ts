// The V1 event stream (`GET /event`) of an `opencode serve` server, read only for the receipts of
// steers sent into a TUI's V1 turn: the assistant message each V1 step saves (`message.updated`)
// names as `parentID` the user message its request carries. 1.18.33 carries these frames on the
// global V2 stream too, but that stream closes on the V1 loop's frames (observed: it closed at each
// `session.status` of a V1 turn, and the receipt frames came while it was reopening), so they are
// read here, where the V1 stream stays open. Health is the V2 stream's to say (server.ts); this
// one only retries, quietly.
import { sseData } from '../qwen-code/serve/sse.js';
import type { OpencodeClient } from './client.js';
import { parseOpencodeEvent, stepParentOf, type OpencodeEvent } from './frames.js';

/** Reads an event stream's body to its end, passing on each frame that parses. */
export async function readFrames(body: ReadableStream<Uint8Array>, on: (e: OpencodeEvent) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    const { frames, rest } = sseData(buffer + decoder.decode(chunk, { stream: true }));
    buffer = rest;
    for (const raw of frames) {
      const e = parseOpencodeEvent(raw);
      if (e !== undefined) on(e);
    }
  }
}

const RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/** Follows `/event` until `signal` aborts, passing on each V1 step's assistant message frame. */
export function followV1Steps(client: OpencodeClient, signal: AbortSignal, onStep: (e: OpencodeEvent) => void): void {
  let retry = RETRY_MS;
  const again = (): void => {
    if (signal.aborted) return;
    const wait = retry;
    retry = Math.min(retry * 2, MAX_RETRY_MS);
    setTimeout(() => void read(), wait).unref();
  };
  const read = async (): Promise<void> => {
    try {
      const res = await client.v1Events(signal);
      if (res.status !== 200 || res.body === null) {
        await res.body?.cancel().catch(() => {});
        return again();
      }
      retry = RETRY_MS;
      await readFrames(res.body, (e) => {
        if (e.session !== undefined && stepParentOf(e) !== undefined) onStep(e);
      });
    } catch {
      // A stream cut short (or a server not answering) is read again after a while.
    }
    again();
  };
  void read();
}
