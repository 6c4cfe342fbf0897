// Fan-out: every live subscription whose filter matches gets every received copy, down-levelled
// to its ceiling (AEP-0003 §5, §6.4), with the backpressure policy of AEP-0003 §8.4: above the
// soft mark debug/info are dropped and counted; notice and above are delivered or the
// subscriber is disconnected with a reason, never dropped silently.
import { captureRank, severityRank, type AepEvent, type CaptureLevel } from '../protocol/envelope.js';
import { downLevel } from '../protocol/capture.js';
import type { Position, Replay } from './session-store.js';
import type { SubscriptionSpec } from './subscription.js';

/** A delivery channel (one WS connection or one SSE response) that frames and buffers text. */
export interface Channel {
  /** Bytes written but not yet taken by the peer. */
  pressure(): number;
  /** Close because the peer is too slow; `delivered` holds the last position per subscription and session. */
  overflow(delivered: { sub: string; session: string; epoch: number; seq: number }[]): void;
}

export interface Sink {
  /** The subscription id (`subscribe.id` on WS; a generated one on SSE). */
  sub: string;
  channel: Channel;
  spec: SubscriptionSpec;
  /** `bytes`, when given, are `text` as UTF-8 (the received frame), for a channel that sends bytes. */
  write(text: string, e: AepEvent, bytes?: Buffer): void;
  /** Marker for a resume position that predates what is held. */
  exhausted(session: string, earliest: Position): void;
  /** Last delivered position per session, for `closing.delivered`. */
  delivered: Map<string, Position>;
}

export interface BackpressureLimits {
  /** Above this many buffered bytes, debug/info are dropped (reference: 1 MiB). */
  soft: number;
  /** Above this, a notice-or-above event disconnects the subscriber (reference: 8 MiB). */
  hard: number;
}

export const DEFAULT_BACKPRESSURE: BackpressureLimits = { soft: 1 << 20, hard: 8 << 20 };

const NOTICE = severityRank('notice');

/** D20: the verbs whose `data.text` is instruction text, redacted-class whatever the sender declared. */
const INSTRUCTION_VERB = /^x\.[a-z0-9_-]+\.control\.(instruct|send_input)$/;

/**
 * The level the relay treats an event at: its declared `capture`, raised to the floor of the
 * fields it carries (D20), so a command declared `metadata`, or with no capture at all, cannot
 * carry instruction text past a `metadata` subscriber.
 */
function levelOf(e: AepEvent): CaptureLevel {
  const declared = e.capture ?? 'metadata';
  const carriesText = INSTRUCTION_VERB.test(e.type) && e.data !== undefined && 'text' in e.data;
  return carriesText && captureRank(declared) < captureRank('redacted') ? 'redacted' : declared;
}

/** The text a subscriber at `ceiling` gets: the raw bytes when nothing must change (AEP-0001 §8.2). */
export function textFor(e: AepEvent, raw: string, ceiling: CaptureLevel | undefined): string {
  if (ceiling === undefined) return raw;
  const level = levelOf(e);
  if (captureRank(ceiling) >= captureRank(level)) return raw;
  // Down-levelling the floored copy prunes the text by its annotation (redacted-class).
  const lowered = downLevel(level === e.capture ? e : { ...e, capture: level }, ceiling);
  return lowered === e ? raw : JSON.stringify(lowered);
}

export class Hub {
  readonly limits: BackpressureLimits;
  private readonly sinks = new Set<Sink>();
  readonly counters = { dropped: 0, disconnected: 0, delivered: 0 };

  constructor(limits: BackpressureLimits = DEFAULT_BACKPRESSURE) {
    this.limits = limits;
  }

  get size(): number {
    return this.sinks.size;
  }

  add(sink: Sink): void {
    this.sinks.add(sink);
  }

  remove(sink: Sink): void {
    this.sinks.delete(sink);
  }

  /** Removes every subscription of a channel (it closed). */
  removeChannel(channel: Channel): void {
    for (const s of this.sinks) if (s.channel === channel) this.sinks.delete(s);
  }

  /**
   * Live fan-out of one received copy, redeliveries included (AEP-0003 §5). Each distinct
   * ceiling's text is made once per event, whatever the number of subscribers; a subscriber
   * served the event as emitted gets `raw` (and the received `bytes`), never a re-serialisation.
   */
  fanOut(e: AepEvent, raw: string, bytes?: Buffer): void {
    let texts: Map<CaptureLevel | undefined, string> | undefined;
    const urgent = severityRank(e.severity) >= NOTICE;
    for (const sink of this.sinks) {
      if (!sink.spec.match(e)) continue;
      const pressure = sink.channel.pressure();
      if (pressure > this.limits.soft && !urgent) {
        this.counters.dropped += 1;
        continue;
      }
      if (pressure > this.limits.hard) {
        this.disconnect(sink.channel);
        continue;
      }
      const ceiling = sink.spec.ceiling;
      let text = ceiling === undefined ? raw : texts?.get(ceiling);
      if (text === undefined) {
        text = textFor(e, raw, ceiling);
        texts ??= new Map();
        texts.set(ceiling, text);
      }
      this.deliver(sink, text, e, text === raw ? bytes : undefined);
    }
  }

  /** Replays stored history into one sink (filter and ceiling applied), before it goes live. */
  replay(sink: Sink, session: string, r: Replay, marker: boolean): void {
    if (marker && r.exhausted) sink.exhausted(session, r.exhausted);
    for (const raw of r.items) {
      const e = JSON.parse(raw) as AepEvent;
      if (!sink.spec.match(e)) continue;
      this.deliver(sink, textFor(e, raw, sink.spec.ceiling), e);
    }
  }

  private deliver(sink: Sink, text: string, e: AepEvent, bytes?: Buffer): void {
    sink.write(text, e, bytes);
    this.counters.delivered += 1;
    if (e.session !== undefined && e.seq !== undefined)
      sink.delivered.set(e.session, { epoch: e.epoch ?? 0, seq: e.seq });
  }

  private disconnect(channel: Channel): void {
    const delivered: { sub: string; session: string; epoch: number; seq: number }[] = [];
    for (const s of this.sinks) {
      if (s.channel !== channel) continue;
      for (const [session, p] of s.delivered) delivered.push({ sub: s.sub, session, epoch: p.epoch, seq: p.seq });
    }
    this.removeChannel(channel);
    this.counters.disconnected += 1;
    channel.overflow(delivered);
  }
}
