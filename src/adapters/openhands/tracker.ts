// The receiver state of one conversation: what the bridge has seen, so each transport event can be
// framed for the pure table (openhands-map.ts). The vendor event id is the dedupe key across
// replay and reconnect; the last vendor timestamp is where a reconnect resumes (`since`); the
// status plane's last value drives run synthesis, with run ids `run:<conversation>:<n>`.
import { newId } from '../../protocol/index.js';
import { statusMoments, statusOf, type OpenHandsFrame, type Status } from '../openhands-map.js';

const RUN_CLOSERS = new Set(['run.finished', 'run.failed', 'run.cancelled']);

export class ConversationTracker {
  readonly id: string;
  private status: Status | null = null;
  private runs = 0;
  private run: string | undefined;
  private attention: string | undefined;
  private readonly seen = new Set<string>();
  private lastTs: string | undefined;
  private first = true;

  constructor(id: string) {
    this.id = id;
  }

  /** The last execution_status the socket showed (the gate's guards read it). */
  get lastStatus(): Status | null {
    return this.status;
  }

  /** The attention request open while the conversation waits for confirmation. */
  get openAttention(): string | undefined {
    return this.attention;
  }

  /** Where a reconnect resumes: the newest vendor timestamp seen (the overlap is deduped). */
  get since(): string | undefined {
    return this.lastTs;
  }

  /** Frames one event, or undefined when it was seen already (a replay overlap). */
  frame(event: Record<string, unknown>, at: number, deltas: boolean): OpenHandsFrame | undefined {
    const id = typeof event.id === 'string' ? event.id : undefined;
    if (id !== undefined) {
      if (this.seen.has(id)) return undefined;
      this.seen.add(id);
    }
    if (typeof event.timestamp === 'string' && (this.lastTs === undefined || event.timestamp > this.lastTs)) this.lastTs = event.timestamp;
    const f: OpenHandsFrame = { conversation_id: this.id, event, status_before: this.status };
    if (this.first) f.first = true;
    this.first = false;
    if (deltas) f.deltas = true;
    if (this.run !== undefined) f.run_before = this.run;
    const next = statusOf(event);
    if (next !== undefined && next !== this.status) {
      const moments = statusMoments(this.status, next);
      if (moments.some((m) => RUN_CLOSERS.has(m.type))) this.run = undefined;
      if (moments.some((m) => m.type === 'run.started')) {
        this.runs += 1;
        this.run = `run:${this.id}:${this.runs}`;
      }
      if (moments.some((m) => m.type === 'attention.requested')) this.attention = newId(at);
      if (this.attention !== undefined && (next === 'waiting_for_confirmation' || this.status === 'waiting_for_confirmation')) f.attention = this.attention;
      if (this.status === 'waiting_for_confirmation') this.attention = undefined;
      this.status = next;
    }
    if (this.run !== undefined) f.run_after = this.run;
    return f;
  }
}
