// The V1 event stream (`GET /event`) of an `opencode serve` server, read only for the receipts of
// steers sent into a TUI's V1 turn: the assistant message each V1 step saves (`message.updated`)
// names as `parentID` the user message its request carries. 1.18.33 carries these frames on the
// global V2 stream too, but that stream closes on the V1 loop's frames (observed: it closed at each
// `session.status` of a V1 turn, and the receipt frames came while it was reopening), so they are
// read here, where the V1 stream stays open. Health is the V2 stream's to say (server.ts); this
// one only retries, quietly.
import { sseData } from '../qwen-code/serve/sse.js';
import type { OpencodeClient } from './client.js';
import { parseOpencodeEvent, rec, stepParentOf, str, type OpencodeEvent } from './frames.js';

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

/** Steps remembered per session: enough to know a late copy of a frame from a new step. */
const KEPT_STEPS = 64;
/** A step's `finish` that lets the V1 loop go on to another step in the same turn. */
const GOES_ON: ReadonlySet<string> = new Set(['tool-calls', 'unknown']);

/**
 * The V1 steps of each session as their frames come (`message.updated`, an assistant message; the
 * same step is saved more than once, its `finish` set at its end). The V1 loop takes a user message
 * saved after its last step ended too: a steer posted just as the turn ended is then the prompt of
 * a new turn, though no idle came between. So a step is known to begin a turn when the step before
 * it in the session ended with a final `finish` (anything but `tool-calls`).
 */
export class V1Steps {
  /** Per session, its steps by id in the order first seen (a few kept), each with its latest `finish`. */
  private readonly steps = new Map<string, Map<string, string | undefined>>();

  /** Records one frame; true when it is a new step that follows a step that ended its turn. */
  began(e: OpencodeEvent): boolean {
    const info = rec(e.data.info);
    const id = str(info?.id);
    if (e.session === undefined || id === undefined || stepParentOf(e) === undefined) return false;
    const steps = this.steps.get(e.session) ?? new Map<string, string | undefined>();
    this.steps.set(e.session, steps);
    const isNew = !steps.has(id);
    const before = isNew ? [...steps.values()].at(-1) : undefined;
    const hadBefore = isNew && steps.size > 0;
    // A frame repeated late (the global stream's copy) keeps the step's place and its finish.
    const finish = str(info?.finish) ?? steps.get(id);
    steps.set(id, finish);
    if (steps.size > KEPT_STEPS) steps.delete(steps.keys().next().value!);
    return hadBefore && before !== undefined && !GOES_ON.has(before);
  }
}
