// The receiver state of one conversation: what the bridge has seen, so each transport event can be
// framed for the pure table (map.ts). The vendor event id is the dedupe key across
// replay and reconnect; the status plane's last value drives run synthesis, with run ids
// `run:<conversation>:<n>`.
//
// What the agent server sends on attach (software-agent-sdk v1.36.1 and main): the `full_state`
// snapshot first, made at subscribe time and never stored (event_service.py
// `subscribe_to_events`), then the stored log (sockets.py, the resend after the subscribe), which
// holds every status change: ConversationState.__setattr__ hands a ConversationStateUpdateEvent
// to the conversation's event callback (state.py; event_service.py `set_on_state_change`), whose
// default callback appends it (local_conversation.py `_default_callback` → state.append_event).
// Live events are published to the subscriber meanwhile, interleaved with the resend. So:
// - a status update older than this connection's snapshot is history: the snapshot already says
//   where the status stands, and replaying the old flips would invent runs and answers;
// - the reconnect cursor (`since`, inclusive) is the newest event older than the snapshot, in the
//   resend's timestamp order: never the snapshot's own time, never a live event that overtook
//   the resend, so a drop mid-resend resumes where the resend stood (the overlap is deduped).
import { newId, type AepEvent } from '../../protocol/index.js';
import { statusMoments, statusOf, type OpenHandsFrame, type Status } from './map.js';
import type { SettledHow } from '../../machines/session-context.js';

const RUN_CLOSERS = new Set(['run.finished', 'run.failed', 'run.cancelled']);
/** Ended requests a tracker remembers, as the session machine does (D34). */
const ENDED_KEPT = 64;

export class ConversationTracker {
  readonly id: string;
  private status: Status | null = null;
  private runs = 0;
  private run: string | undefined;
  private attention: string | undefined;
  private readonly seen = new Set<string>();
  private lastTs: string | undefined;
  /** This connection's `full_state` time: what is older is the stored log being resent. */
  private snapshotTs: string | undefined;
  private first = true;
  /** A respond the server took: the flip out of waiting is its outcome (design record, one outcome source). */
  private settling: { cause: string; answer: Record<string, unknown> } | undefined;
  /** A pause, resume or interrupt the server took: the next status change is its outcome. */
  private pendingCause: string | undefined;
  /** Requests that ended, newest last, so a late respond is told how (D34) instead of "unknown". */
  private readonly ended: { id: string; how: SettledHow }[] = [];

  constructor(id: string) {
    this.id = id;
  }

  /**
   * Picks up where a previous run of the bridge left off, from the events its log holds for this
   * conversation: the vendor ids seen, the last vendor time, the run count and the open run and
   * request. The status is estimated from them (the log keeps no status values): a reconnect's
   * full_state then moves it on, so a restart adds no duplicate and no second run.started.
   */
  restore(events: readonly AepEvent[]): void {
    if (events.length === 0) return;
    this.first = false;
    // The cursor as the live rule sets it (frame()): the newest event resent behind its
    // connection's snapshot, the log keeping arrival order. With none, the oldest event seen:
    // resending from there repeats only what the seen ids drop.
    let snapshotTs: string | undefined;
    let oldest: string | undefined;
    for (const e of events) {
      const vid = e.data?.vendor_event_id;
      if (typeof vid === 'string') this.seen.add(vid);
      const ts = e.data?.vendor_ts;
      if (typeof ts === 'string') {
        if (e.type === 'state.snapshot') snapshotTs = ts;
        else {
          if (oldest === undefined || ts < oldest) oldest = ts;
          if (snapshotTs !== undefined && ts < snapshotTs && (this.lastTs === undefined || ts > this.lastTs))
            this.lastTs = ts;
        }
      }
      if (e.type === 'run.started') {
        this.runs += 1;
        this.run = e.run;
      } else if (RUN_CLOSERS.has(e.type) && e.run === this.run) this.run = undefined;
      if (e.type === 'attention.requested') this.attention = e.id;
      else if ((e.type === 'attention.resolved' || e.type === 'attention.timeout') && e.subject === this.attention) {
        const by =
          e.type === 'attention.timeout' ? 'timeout' : e.data?.resolution === 'answered' ? 'answered' : 'answered-oob';
        this.endAttention(by);
      }
    }
    this.lastTs ??= oldest;
    this.status =
      this.attention !== undefined ? 'waiting_for_confirmation' : this.run !== undefined ? 'running' : 'idle';
  }

  /** The last execution_status the socket showed (the gate's guards read it). */
  get lastStatus(): Status | null {
    return this.status;
  }

  /** The attention request open while the conversation waits for confirmation. */
  get openAttention(): string | undefined {
    return this.attention;
  }

  /** How a request that is no longer open ended, if this tracker saw it end. */
  endedHow(request: string): SettledHow | undefined {
    return this.ended.find((x) => x.id === request)?.how;
  }

  private endAttention(how: SettledHow): void {
    if (this.attention === undefined) return;
    this.ended.push({ id: this.attention, how });
    if (this.ended.length > ENDED_KEPT) this.ended.shift();
    this.attention = undefined;
  }

  /** Where a reconnect resumes: the newest resent event's timestamp (inclusive; the overlap is deduped). */
  get since(): string | undefined {
    return this.lastTs;
  }

  /** A new socket: its `full_state` comes first and sets the line between resend and live. */
  attached(): void {
    this.snapshotTs = undefined;
  }

  /** A control.attention.respond on its way: marks the open request settling (undefined clears it). */
  settle(cause: string | undefined, answer: Record<string, unknown> = {}): void {
    this.settling = cause !== undefined && this.attention !== undefined ? { cause, answer } : undefined;
  }

  /** A pause, resume or interrupt on its way: the next status change is cause-linked to it (undefined clears). */
  expect(cause: string | undefined): void {
    this.pendingCause = cause;
  }

  /** Frames one event, or undefined when it was seen already (a replay overlap). */
  frame(event: Record<string, unknown>, at: number, deltas: boolean, answerable = false): OpenHandsFrame | undefined {
    const ts = typeof event.timestamp === 'string' ? event.timestamp : undefined;
    const snapshot = event.kind === 'ConversationStateUpdateEvent' && event.key === 'full_state';
    if (snapshot && ts !== undefined) this.snapshotTs = ts;
    const resent = !snapshot && ts !== undefined && this.snapshotTs !== undefined && ts < this.snapshotTs;
    // The resend moves the cursor even where it repeats what was seen (the overlap).
    if (resent && (this.lastTs === undefined || ts > this.lastTs)) this.lastTs = ts;
    const id = typeof event.id === 'string' ? event.id : undefined;
    if (id !== undefined) {
      if (this.seen.has(id)) return undefined;
      this.seen.add(id);
    }
    const f: OpenHandsFrame = { conversation_id: this.id, event, status_before: this.status };
    if (resent && statusOf(event) !== undefined) f.history = true;
    if (this.first) f.first = true;
    this.first = false;
    if (deltas) f.deltas = true;
    if (answerable) f.answerable = true;
    if (this.run !== undefined) f.run_before = this.run;
    // A resent status update is history: the snapshot before it already moved the status on.
    const next = f.history === true ? undefined : statusOf(event);
    if (next !== undefined && next !== this.status) {
      const moments = statusMoments(this.status, next);
      if (moments.some((m) => RUN_CLOSERS.has(m.type))) this.run = undefined;
      if (moments.some((m) => m.type === 'run.started')) {
        this.runs += 1;
        this.run = `run:${this.id}:${this.runs}`;
      }
      if (moments.some((m) => m.type === 'attention.requested')) this.attention = newId(at);
      if (
        this.attention !== undefined &&
        (next === 'waiting_for_confirmation' || this.status === 'waiting_for_confirmation')
      )
        f.attention = this.attention;
      if (this.status === 'waiting_for_confirmation') {
        if (this.settling !== undefined) f.answered = { id: newId(at), ...this.settling };
        // Out of waiting with no respond of ours on its way: the server's own client answered it.
        this.endAttention(this.settling !== undefined ? 'answered' : 'answered-oob');
        this.settling = undefined;
      }
      // Any status change clears the note, so no stale link persists.
      if (this.pendingCause !== undefined) f.caused_by = this.pendingCause;
      this.pendingCause = undefined;
      this.status = next;
    }
    if (this.run !== undefined) f.run_after = this.run;
    return f;
  }
}
