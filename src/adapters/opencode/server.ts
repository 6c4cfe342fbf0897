// One connection to an `opencode serve` server: its global event stream, followed with backoff,
// the sessions it hosts, and the turns it runs. opencode 1.18.33 names no turn: a prompt folded
// into an idle session (`session.next.prompted`) opens one, and it ends when the server no
// longer lists the session as running (`GET /api/session/active`), which the connection asks
// after each step's end. Those two moments go out as synthetic frames (`aep.turn.*`) so the
// table and the lane read one stream. A server that stops answering is said once; the
// connection retries and comes back on its own.
import { type Observable, Subject } from 'rxjs';
import { SteeringError } from '../../protocol/errors.js';
import { opencodeClient, type OpencodeClient, type OpencodeClientOptions } from './client.js';
import { V1Steps, followV1Steps, readFrames } from './v1-stream.js';
import {
  PROMPTED,
  SESSION_DELETED,
  SESSION_SEEN,
  STEP_ENDS,
  TURN_ENDED,
  TURN_STARTED,
  busyOf,
  runningOf,
  sessionsOf,
  stepParentOf,
  str,
  type OpencodeEvent,
} from './frames.js';

export type ServerHealth = { kind: 'starting' } | { kind: 'up' } | { kind: 'down' | 'refused'; error: SteeringError };

export interface OpencodeServerOptions extends OpencodeClientOptions {
  /** How often running turns are checked for their end besides each step's end (default 500 ms). */
  pollMs?: number;
  /** First retry delay while the server does not answer, doubled up to `maxRetryMs` (250 ms, 10 s). */
  retryMs?: number;
  maxRetryMs?: number;
  onError?: (e: SteeringError) => void;
}

/** What the connection knows of one session. */
interface Known {
  directory?: string;
  /** The prompt (message id) that opened the running turn. */
  turn?: string;
  /** The turn is being stopped (an interrupt was sent, or a tool said it was interrupted). */
  stopping?: boolean;
  /** The turn runs in the V1 loop (a TUI's prompt): seen busy on `/session/status`, with no V2 frame. */
  v1?: boolean;
}

/** How many times a step's end asks whether the session went idle before the poll takes over. */
const SETTLE_TRIES = 8;
const SETTLE_GAP_MS = 60;

export class OpencodeServer {
  readonly client: OpencodeClient;
  /** Every frame, with the synthetic turn frames, for the table (arrivals) and the lane (facts). */
  readonly events$: Observable<OpencodeEvent>;
  /** The server went from answering to not answering (once per outage), with the words already said. */
  readonly lost$: Observable<string>;
  private readonly subject = new Subject<OpencodeEvent>();
  private readonly lost = new Subject<string>();
  private readonly sessions = new Map<string, Known>();
  /** The V1 loop's steps per session: which one began a turn. */
  private readonly steps = new V1Steps();
  private health: ServerHealth = { kind: 'starting' };
  private readonly ctl = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private retry: number;
  private closed = false;
  private started = false;
  private readonly report: (e: SteeringError) => void;

  constructor(private readonly o: OpencodeServerOptions) {
    this.client = opencodeClient(o);
    this.retry = o.retryMs ?? 250;
    this.report = o.onError ?? ((e) => process.stderr.write(`aep-steer adapter: ${e.code}: ${e.message}\n`));
    this.events$ = this.subject.asObservable();
    this.lost$ = this.lost.asObservable();
  }

  /** Connects (once); frames flow to subscribers of `events$` from then on. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.connect();
    // A V1 step's frame may also come on the global stream: the lane takes only the first for each steer.
    followV1Steps(this.client, this.ctl.signal, (e) => {
      const s = e.session === undefined ? undefined : this.sessions.get(e.session);
      if (this.closed || s === undefined) return;
      this.stepped(e.session!, s, e);
      this.subject.next(e);
    });
    this.poller = setInterval(() => void this.pollTurns(), this.o.pollMs ?? 500);
  }

  state(): ServerHealth {
    return this.health;
  }

  /** Whether the server answers and hosts this session. */
  hosts(session: string): boolean {
    return this.health.kind === 'up' && this.sessions.has(session);
  }

  turnOf(session: string): string | undefined {
    return this.sessions.get(session)?.turn;
  }

  /** Whether the running turn is the V1 loop's (a TUI's prompt), which takes a steer only through V1. */
  v1Turn(session: string): boolean {
    const s = this.sessions.get(session);
    return s?.turn !== undefined && s.v1 === true;
  }

  /**
   * Asks the server now whether a turn runs in a session the connection thinks idle: a TUI's V1
   * turn shows only on the next poll, so a steer sent before it would be refused idle. A busy one
   * is opened as the poll would open it; true when a turn is then known.
   */
  async busyNow(session: string): Promise<boolean> {
    if (this.turnOf(session) !== undefined) return true;
    const busy = await this.busyV1();
    // Only V1's busy ones: a V2 turn opens on its own `prompted`, which names the prompt.
    const v2 = busy?.has(session) === true ? await this.running(new Set()) : undefined;
    const s = this.sessions.get(session);
    if (s !== undefined && v2 !== undefined && !v2.has(session) && this.turnOf(session) === undefined && !this.closed)
      this.open(session, s, `${session}#running`, true);
    return this.turnOf(session) !== undefined;
  }

  /** The turn now running is being stopped: its end is an interrupted one. */
  stopping(session: string): void {
    const s = this.sessions.get(session);
    if (s?.turn !== undefined) s.stopping = true;
  }

  /** Looks the session up on the server now (one created a moment ago may not have sent a frame yet). */
  async find(session: string): Promise<boolean> {
    if (this.sessions.has(session)) return this.health.kind === 'up';
    try {
      const r = await this.client.request('GET', `/api/session/${encodeURIComponent(session)}`);
      if (r.status !== 200) return false;
      this.know(session, undefined);
      return true;
    } catch (err) {
      this.become(this.asDown(err));
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ctl.abort();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.poller !== undefined) clearInterval(this.poller);
    this.subject.complete();
    this.lost.complete();
  }

  // ---- the stream ----------------------------------------------------------------------------

  private async connect(): Promise<void> {
    if (this.closed) return;
    try {
      const res = await this.client.events(this.ctl.signal);
      if (res.status !== 200 || res.body === null) {
        await res.body?.cancel().catch(() => {});
        throw new SteeringError(
          'SOURCE_UNREACHABLE',
          `${this.client.url} answered its event stream with HTTP ${res.status}: is it an opencode server?`,
        );
      }
      await this.discover();
      this.become({ kind: 'up' });
      this.retry = this.o.retryMs ?? 250;
      await readFrames(res.body, (e) => this.take(e));
      // 1.18.33 closes its event stream now and then while a TUI is attached (observed in
      // e2e/opencode-tui): it is opened again at once; a server that then does not answer is lost.
      if (this.closed) return;
      this.timer = setTimeout(() => void this.connect(), 0);
      return;
    } catch (err) {
      if (this.closed) return;
      this.become(this.asDown(err));
    }
    const wait = this.retry;
    this.retry = Math.min(this.retry * 2, this.o.maxRetryMs ?? 10_000);
    this.timer = setTimeout(() => void this.connect(), wait);
  }

  private asDown(err: unknown): ServerHealth {
    const e =
      err instanceof SteeringError
        ? err
        : new SteeringError(
            'SOURCE_UNREACHABLE',
            `opencode server at ${this.client.url} stopped answering: ${String(err)}`,
          );
    return { kind: e.code === 'SOURCE_UNAUTHORIZED' || e.code === 'CONFIG_INVALID' ? 'refused' : 'down', error: e };
  }

  /** The sessions the server lists, and the turns running in them, each time the stream opens. */
  private async discover(): Promise<void> {
    const list = await this.client.request('GET', '/api/session');
    if (list.status !== 200)
      throw new SteeringError(
        'SOURCE_UNREACHABLE',
        `opencode server answered its session list with HTTP ${list.status}`,
      );
    for (const s of sessionsOf(list.body)) this.know(s.id, s.directory);
    const busy = (await this.busyV1()) ?? new Set<string>();
    const v2 = (await this.running(new Set())) ?? new Set<string>();
    for (const id of new Set([...v2, ...busy])) {
      const s = this.sessions.get(id);
      // A turn already running when the connection opened: its prompt is unknown, so it is named by the session.
      if (s !== undefined && s.turn === undefined) this.open(id, s, `${id}#running`, !v2.has(id));
    }
  }

  /** A session seen for the first time is announced (`aep.session.seen`) before any frame of its own. */
  private know(session: string, directory: string | undefined): Known {
    let s = this.sessions.get(session);
    if (s === undefined) {
      s = directory === undefined ? {} : { directory };
      this.sessions.set(session, s);
      this.subject.next({ type: SESSION_SEEN, session, data: {}, ...this.dir(s) });
    } else if (directory !== undefined) s.directory ??= directory;
    return s;
  }

  private take(e: OpencodeEvent): void {
    const id = e.session;
    if (id === undefined) return void this.subject.next(e);
    const s = this.know(id, e.directory);
    const enriched = s.directory !== undefined && e.directory === undefined ? { ...e, directory: s.directory } : e;
    if (e.type === PROMPTED && s.turn === undefined) {
      const opener = str(e.data.messageID);
      if (opener !== undefined) this.open(id, s, opener);
    }
    if (stepParentOf(e) !== undefined) this.stepped(id, s, e);
    if (e.type === 'session.next.tool.failed' && /interrupt/i.test(JSON.stringify(e.data.error ?? '')))
      s.stopping = true;
    this.subject.next(enriched);
    if (STEP_ENDS.has(e.type)) void this.settle(id, SETTLE_TRIES);
    if (e.type === SESSION_DELETED) {
      if (s.turn !== undefined) this.end(id, s);
      this.sessions.delete(id);
    }
  }

  /**
   * A V1 step's frame (from either stream). A new step after the turn's final one means the V1
   * loop took a message saved after that turn ended (a steer posted just as it ended) as a new
   * turn's prompt, with no idle between: that turn ends, and one named by the message begins,
   * before the frame is passed on (so its receipt says it began the turn).
   */
  private stepped(session: string, s: Known, e: OpencodeEvent): void {
    const prompt = stepParentOf(e);
    if (!this.steps.began(e) || prompt === undefined || s.turn === undefined || s.v1 !== true) return;
    this.end(session, s);
    this.open(session, s, prompt, true);
  }

  private open(session: string, s: Known, turn: string, v1 = false): void {
    s.turn = turn;
    delete s.stopping;
    if (v1) s.v1 = true;
    else delete s.v1;
    this.subject.next({ type: TURN_STARTED, session, data: { turnId: turn }, ...this.dir(s) });
  }

  private end(session: string, s: Known): void {
    const turn = s.turn;
    if (turn === undefined) return;
    const interrupted = s.stopping === true;
    delete s.turn;
    delete s.stopping;
    delete s.v1;
    this.subject.next({ type: TURN_ENDED, session, data: { turnId: turn, interrupted }, ...this.dir(s) });
  }

  private dir(s: Known): { directory?: string } {
    return s.directory === undefined ? {} : { directory: s.directory };
  }

  /** After a step's end: whether the session went idle, asked again a few times while it says running. */
  private async settle(session: string, tries: number): Promise<void> {
    // An answer asked before a newer turn opened says nothing of that turn: only the turn asked about may end.
    const asked = this.sessions.get(session)?.turn;
    const running = await this.running();
    const s = this.sessions.get(session);
    if (running === undefined || s?.turn === undefined || s.turn !== asked || this.closed) return;
    if (!running.has(session)) return this.end(session, s);
    if (tries > 1) this.timer2(() => void this.settle(session, tries - 1));
  }

  private timer2(f: () => void): void {
    setTimeout(() => {
      if (!this.closed) f();
    }, SETTLE_GAP_MS).unref();
  }

  private async pollTurns(): Promise<void> {
    if (this.health.kind !== 'up') return;
    const asked = new Map([...this.sessions].map(([id, s]) => [id, s.turn]));
    const busy = (await this.busyV1()) ?? new Set<string>();
    const v2 = await this.running(new Set());
    if (v2 === undefined) return;
    for (const [id, s] of this.sessions)
      if (s.turn !== undefined && s.turn === asked.get(id) && !v2.has(id) && !busy.has(id)) this.end(id, s);
    // A turn the TUI started through V1 shows only as busy there (a V2 one opens on its prompt): named by its session.
    for (const id of busy) {
      const s = this.sessions.get(id);
      if (s !== undefined && s.turn === undefined && !v2.has(id)) this.open(id, s, `${id}#running`, true);
    }
  }

  /** The sessions running now (V2's active ones and V1's busy ones); undefined when the server did not say. */
  private async running(busy?: Set<string>): Promise<Set<string> | undefined> {
    try {
      const r = await this.client.request('GET', '/api/session/active');
      if (r.status !== 200) return undefined;
      const all = runningOf(r.body);
      for (const id of busy ?? (await this.busyV1()) ?? []) all.add(id);
      return all;
    } catch {
      return undefined;
    }
  }

  /** The sessions V1 says are busy and V2 does not list as running: the TUI's turns. */
  private async busyV1(): Promise<Set<string> | undefined> {
    try {
      const r = await this.client.request('GET', '/session/status');
      return r.status === 200 ? busyOf(r.body) : undefined;
    } catch {
      return undefined;
    }
  }

  /** A change of the server's state: said once, and `lost` once when a server that answered goes. */
  private become(next: ServerHealth): void {
    const prev = this.health;
    this.health = next;
    if (next.kind !== 'down' && next.kind !== 'refused') {
      if (prev.kind === 'down' || prev.kind === 'refused')
        this.report(new SteeringError('SOURCE_UNREACHABLE', `opencode server at ${this.client.url} answers again`));
      return;
    }
    // One outage is said once, whatever each retry's error says; a change between down and refused is new.
    if (prev.kind === next.kind) return;
    if (prev.kind !== 'up') {
      this.report(next.error);
      return;
    }
    const detail = `${next.error.message}; its sessions are not steered until it answers again`;
    this.report(new SteeringError(next.error.code, detail));
    // Turns the server ran are over as far as anyone can tell; the sessions are looked up again.
    for (const [id, s] of this.sessions) if (s.turn !== undefined) this.end(id, { ...s, stopping: true });
    this.sessions.clear();
    this.lost.next(detail);
  }
}
