// The audit: reads AEP JSONL files (adapter logs, relay exports), folds them through the
// steering fold and the stream checks, and returns each instruction's lifecycle and every
// violation with the file, line and event id where it happened.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { AepEvent } from '../protocol/envelope.js';
import { surfaceFor } from '../adapters/registry.js';
import { ActorHost } from '../streams/actor-host.js';
import type { LogRecord } from '../streams/log.js';
import { replayInto } from '../streams/replay.js';
import { SteeringFold } from './lifecycle.js';
import type { Finding, InstructionRecord, SessionView } from './views.js';
import { StreamChecker, type ViolationRule as StreamRule } from '../protocol/stream-checks.js';
import { IdLedger } from './order.js';
import type { RequestDecision } from './decisions.js';
import { SpawnCheck, type SpawnRule } from './spawn-rules.js';

type ViolationRule =
  | Finding['rule']
  | SpawnRule
  | Exclude<StreamRule, 'id-collision'>
  | 'line-invalid'
  | 'envelope-invalid'
  | 'id-conflict'
  | 'machine-mismatch';

export interface Violation {
  rule: ViolationRule;
  message: string;
  file?: string;
  line?: number;
  eventId?: string;
}

interface AuditNote {
  kind: 'torn-tail' | 'not-an-event' | 'machine-skipped' | 'in-flight';
  file: string;
  line: number;
  message: string;
}

export interface AuditResult {
  files: string[];
  events: number;
  /** Identical copies of an event already read (legal: delivery is at-least-once). */
  redeliveries: number;
  instructions: InstructionRecord[];
  /** D46: each request that ended and who decided it. */
  requests?: RequestDecision[];
  sessions: SessionView[];
  violations: Violation[];
  notes: AuditNote[];
}

export interface AuditOptions {
  /** Called with bytes read so far and the total, for a progress bar. */
  onProgress?: (done: number, total: number) => void;
}

/** Minimal envelope check for lines of a log (AEP-0001 §5: the required attributes). */
function envelopeProblem(v: Record<string, unknown>): string | undefined {
  if (v['aep'] !== '0.1') return `aep is ${JSON.stringify(v['aep'])}, expected "0.1"`;
  for (const k of ['id', 'type', 'time', 'source', 'agent'] as const) {
    if (typeof v[k] !== 'string' || v[k] === '') return `${k} must be a non-empty string`;
  }
  if (v['data'] !== undefined && (v['data'] === null || typeof v['data'] !== 'object' || Array.isArray(v['data'])))
    return 'data must be an object';
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The event inside an adapter log record: `{k:"ev", e}` or a command carried by `{k:"in", i:{command}}`. */
function adapterLogEvent(r: Record<string, unknown>): Record<string, unknown> | undefined {
  if (r['k'] === 'ev' && isObject(r['e'])) return r['e'];
  if (r['k'] === 'in' && isObject(r['i']) && isObject(r['i']['command'])) return r['i']['command'];
  return undefined;
}

class Audit {
  readonly fold = new SteeringFold();
  /** D45: the worker tree's rules. */
  private readonly spawned = new SpawnCheck();
  private readonly ids = new IdLedger();
  private readonly violations: Violation[] = [];
  private readonly notes: AuditNote[] = [];
  private readonly files: string[] = [];
  private events = 0;
  private redeliveries = 0;
  /** Adapter log records per file, replayed through the session machines at the end. */
  private readonly adapterLogs = new Map<string, LogRecord[]>();

  /** Reads one JSONL file line by line; a torn final line (a crash mid-write) is a note, not a violation. */
  async addFile(file: string, opts: AuditOptions & { base?: number; total?: number } = {}): Promise<void> {
    this.files.push(file);
    // The protocol's stream rules run per file: each file is one stream in its own order.
    const track = new StreamChecker();
    const input = createReadStream(file);
    const decoder = new StringDecoder('utf8'); // a chunk may end inside a multi-byte character
    let carry = '';
    let lineNo = 0;
    let done = opts.base ?? 0;
    const total = opts.total ?? (await stat(file)).size;
    for await (const chunk of input as AsyncIterable<Buffer>) {
      done += chunk.length;
      const text = carry + decoder.write(chunk);
      const parts = text.split('\n');
      carry = parts.pop() ?? '';
      for (const line of parts) {
        lineNo += 1;
        this.addLine(line, file, lineNo, track, false);
      }
      opts.onProgress?.(done, total);
    }
    carry += decoder.end();
    if (carry !== '') {
      lineNo += 1;
      this.addLine(carry, file, lineNo, track, true);
    }
  }

  /** Adds one already-parsed event (used for streams that do not come from a file). */
  addEvent(e: AepEvent, place: { file?: string; line?: number } = {}, track?: StreamChecker): void {
    // id-collision is left to the ledger, which also sees reuse across files.
    for (const v of track?.push(e) ?? []) {
      if (v.rule !== 'id-collision')
        this.violations.push({ rule: v.rule, message: v.message, ...place, eventId: e.id });
    }
    const seen = this.ids.see(e);
    if (seen === 'repeat') {
      this.redeliveries += 1;
      return;
    }
    this.events += 1;
    if (seen !== 'new') {
      this.violations.push({ ...seen, ...place, eventId: e.id });
      return;
    }
    this.fold.apply(e, place);
    this.spawned.see(e, place);
  }

  private addLine(raw: string, file: string, line: number, track: StreamChecker, last: boolean): void {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') {
      this.violations.push({
        rule: 'line-invalid',
        message: 'blank line (JSONL has one event per line, no blank lines: AEP-0003 §3.1)',
        file,
        line,
      });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (last) {
        this.notes.push({
          kind: 'torn-tail',
          file,
          line,
          message: 'last line is incomplete (a write cut short); ignored',
        });
      } else {
        this.violations.push({ rule: 'line-invalid', message: `not JSON: ${(err as Error).message}`, file, line });
      }
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.violations.push({ rule: 'line-invalid', message: 'line is not a JSON object', file, line });
      return;
    }
    let obj = value as Record<string, unknown>;
    if (!('aep' in obj)) {
      // An adapter's own log (streams/log.ts) wraps what it emitted (`ev`) and what reached a
      // session actor (`in`, commands verbatim inside); in-flight journal records carry no event.
      if (obj['k'] === 'ev' || obj['k'] === 'in' || obj['k'] === 'flight') {
        const list = this.adapterLogs.get(file) ?? [];
        list.push(obj as unknown as LogRecord);
        this.adapterLogs.set(file, list);
      }
      const inner = adapterLogEvent(obj);
      if (inner === undefined) {
        if (obj['k'] !== 'flight' && obj['k'] !== 'in')
          this.notes.push({
            kind: 'not-an-event',
            file,
            line,
            message: 'record is neither an event nor an adapter log record; skipped',
          });
        return;
      }
      obj = inner;
    }
    const problem = envelopeProblem(obj);
    if (problem) {
      this.violations.push({
        rule: 'envelope-invalid',
        message: problem,
        file,
        line,
        ...(typeof obj['id'] === 'string' ? { eventId: obj['id'] } : {}),
      });
      return;
    }
    this.addEvent(obj as AepEvent, { file, line }, track);
  }

  /**
   * An adapter log holds both what reached each session actor and what it emitted. Replaying the
   * inputs through the real session machine (streams/replay.ts, D11) must leave exactly the
   * instructions the events call pending, in the same order, and end the sessions they end.
   */
  private machineCheck(file: string, records: LogRecord[]): Violation[] {
    const agent = records.find((r): r is Extract<LogRecord, { k: 'ev' }> => r.k === 'ev')?.e.agent;
    const surface = agent === undefined ? undefined : surfaceFor(agent);
    if (!surface) {
      this.notes.push({
        kind: 'machine-skipped',
        file,
        line: 0,
        message: `no session machine for agent ${agent ?? '(none)'}; machine replay skipped`,
      });
      return [];
    }
    const host = new ActorHost({ surface, instruct: true, host: 'audit' });
    const out: Violation[] = [];
    try {
      replayInto(host, records);
      for (const session of host.sessionKeys()) {
        const ctx = host.context(session)!;
        // A steer a native lane holds is pending on both sides until the vendor's receipt (D30).
        const held = [...ctx.inFlight.flatMap((b) => b.items), ...ctx.queue, ...(ctx.laned ?? [])];
        // A send_input still with its channel is pending on both sides; once sent, the stream
        // counts it delivered while the machine waits for the consumption report.
        const sending = new Set(ctx.inputs.filter((i) => i.phase === 'sending').map((i) => i.id));
        const sent = new Set(ctx.inputs.filter((i) => i.phase === 'sent').map((i) => i.id));
        const view = this.fold.sessionView(session);
        const pending = view?.queue.map((q) => q.id).filter((id) => !sent.has(id)) ?? [];
        const stream = pending.filter((id) => !sending.has(id));
        // A failed write puts its batch back at the queue's head while a later batch may still be
        // in flight: the machine's pending order is acceptance order, as the events' is (D3, D9).
        const rank = (id: string): number => {
          const i = stream.indexOf(id);
          return i < 0 ? Number.MAX_SAFE_INTEGER : i;
        };
        const machine = held.sort((a, b) => a.acceptedAt - b.acceptedAt || rank(a.id) - rank(b.id)).map((i) => i.id);
        const streamSending = pending.filter((id) => sending.has(id));
        if (streamSending.length !== sending.size) {
          out.push({
            rule: 'machine-mismatch',
            file,
            message: `session ${session}: the session machine has ${sending.size} input(s) with the transport, the events say ${streamSending.length}`,
          });
        }
        if (machine.join(' ') !== stream.join(' ')) {
          out.push({
            rule: 'machine-mismatch',
            file,
            message: `session ${session}: the session machine holds [${machine.join(', ')}] pending, the events say [${stream.join(', ')}]`,
          });
        }
        const machineEnded = host.stateValue(session) === 'ended';
        if (machineEnded !== (view?.state === 'ended')) {
          out.push({
            rule: 'machine-mismatch',
            file,
            message: `session ${session}: the session machine is ${machineEnded ? '' : 'not '}ended, the events say ${view?.state ?? 'nothing'}`,
          });
        }
      }
    } catch (err) {
      out.push({
        rule: 'machine-mismatch',
        file,
        message: `the log's inputs do not replay through the session machine: ${(err as Error).message}`,
      });
    } finally {
      host.stop();
    }
    return out;
  }

  result(): AuditResult {
    const violations = [...this.violations];
    for (const [file, records] of this.adapterLogs) violations.push(...this.machineCheck(file, records));
    // An instruction the adapter handed to a reply whose write result the log does not hold yet
    // (the log was read mid-write, or the adapter stopped there) is in flight, not missing: the
    // write result or the restart's delivery-unknown (D9, D12) ends it.
    const inFlight = new Set([...this.adapterLogs.values()].flatMap(unsettledFlights));
    const notes = [...this.notes];
    for (const f of this.spawned.findings())
      violations.push({ rule: f.rule, message: f.message, eventId: f.eventId, ...f.place });
    for (const f of this.fold.findings()) {
      if (f.rule === 'terminal-missing' && f.instruction !== undefined && inFlight.has(f.instruction)) {
        const message = `instruction ${f.instruction} was in a reply whose write result the log does not hold`;
        notes.push({ kind: 'in-flight', file: f.place.file ?? '', line: f.place.line ?? 0, message });
        continue;
      }
      const v: Violation = { rule: f.rule, message: f.message, eventId: f.eventId };
      if (f.place.file !== undefined) v.file = f.place.file;
      if (f.place.line !== undefined) v.line = f.place.line;
      violations.push(v);
    }
    violations.sort((a, b) => (a.file ?? '').localeCompare(b.file ?? '') || (a.line ?? 0) - (b.line ?? 0));
    return {
      files: [...this.files],
      events: this.events,
      redeliveries: this.redeliveries,
      instructions: this.fold.instructions(),
      requests: this.fold.requestDecisions(),
      sessions: this.fold.sessions(),
      violations,
      notes,
    };
  }
}

/** Ids of the in-flight journal records (D12) no reply write result or restart settled. */
function unsettledFlights(records: readonly LogRecord[]): string[] {
  const open = new Map<string, string[]>();
  for (const r of records) {
    if (r.k === 'flight') open.set(`${r.s} ${r.hook}`, r.ids);
    else if (r.k === 'in' && r.i.type === 'restart.recovered') open.clear();
    else if (r.k === 'in' && (r.i.type === 'reply.written' || r.i.type === 'reply.failed'))
      open.delete(`${r.s} ${r.i.hookId}`);
  }
  return [...open.values()].flat();
}

/** Audits files in the order given. */
export async function auditFiles(files: string[], opts: AuditOptions = {}): Promise<AuditResult> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  const total = sizes.reduce((a, b) => a + b, 0);
  const audit = new Audit();
  let base = 0;
  for (const [i, file] of files.entries()) {
    await audit.addFile(file, { ...opts, base, total });
    base += sizes[i]!;
  }
  return audit.result();
}
