// The loopback HTTP endpoint vendor hooks post to (D15). The path carries a per-install secret,
// so another local program cannot drain a queue with fake hooks. Every failure on this path
// ends in the vendor's neutral reply: steering never blocks or breaks the agent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { Observable, share } from 'rxjs';
import { SteeringError, newId } from '../protocol/index.js';
import type { HookReply } from './surface.js';
import { recordShape } from '../protocol/wire-shapes.js';

const DEFAULT_BODY_LIMIT = 8 * 1024 * 1024; // tool outputs ride in hook bodies
const DEFAULT_HOOK_BUDGET_MS = 2000; // a step slower than this gets the neutral reply
/** Deeper than any vendor's hook input (tool inputs included); deeper bodies are refused unparsed (D24). */
const DEFAULT_MAX_DEPTH = 64;

/**
 * Tracks JSON nesting over a body's chunks as they arrive, so a deep body is refused before it
 * is parsed and the scan is spread over the reads instead of blocking other hooks at the end.
 * Nesting can only pass the limit once more than `limit` brackets opened, so until then the
 * guard only counts openers with native searches and keeps the chunks; past that count it scans
 * what it kept, then every later chunk, byte by byte. Ordinary hook bodies never get scanned.
 */
export class DepthGuard {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private openers = 0;
  private held: Buffer[] | undefined = [];
  max = 0;
  constructor(private readonly limit: number) {}

  /** False once the nesting went past the limit. */
  feed(chunk: Buffer): boolean {
    if (this.held !== undefined) {
      this.openers += countUpTo(chunk, 0x7b, this.limit - this.openers + 1);
      if (this.openers <= this.limit) this.openers += countUpTo(chunk, 0x5b, this.limit - this.openers + 1);
      if (this.openers <= this.limit) {
        this.held.push(chunk);
        return true;
      }
      const kept = this.held;
      this.held = undefined;
      for (const c of kept) if (!this.scan(c)) return false;
    }
    return this.scan(chunk);
  }

  private scan(chunk: Buffer): boolean {
    let { depth, inString, escaped } = this;
    for (let i = 0; i < chunk.length; i += 1) {
      const c = chunk[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) {
        depth += 1;
        if (depth > this.limit) {
          this.max = depth;
          return false;
        }
      } else if (c === 0x7d || c === 0x5d) depth -= 1;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return true;
  }
}

/** How often `byte` occurs in `chunk`, counting no further than `cap`. */
function countUpTo(chunk: Buffer, byte: number, cap: number): number {
  let n = 0;
  for (let i = chunk.indexOf(byte); i !== -1 && n < cap; i = chunk.indexOf(byte, i + 1)) n += 1;
  return n;
}

/** One hook call waiting for its reply. */
export interface HookArrival {
  /** Minted at arrival; names this hook in the session's inputs. */
  id: string;
  at: number;
  body: Record<string, unknown>;
  /**
   * Writes the reply. Resolves true once the response finished, false when it could not be
   * written (client gone, budget already spent, body not serialisable: D9). With `wait` false
   * nobody needs that answer (a reply that hands over nothing): the reply is written and the
   * promise resolves at once with whether it could be started.
   */
  respond(reply: HookReply, wait?: boolean): Promise<boolean>;
  /** Writes the vendor's neutral reply (D15): what every answer that hands over nothing is. */
  neutral(): Promise<boolean>;
  /** Reports `err` and answers neutrally: a failure on the hook path never blocks the agent (D15). */
  failOpen(err: SteeringError): Promise<boolean>;
  /** The reply waits for a decision (D13): the budget becomes `ms` plus a margin. */
  hold(ms: number): void;
  /** Settles when the connection closes, replied or not. */
  closed: Promise<void>;
}

export interface HookEndpointOptions {
  port: number;
  secret: string;
  host?: string;
  bodyLimit?: number;
  /** JSON nesting refused before parsing (D24). */
  maxDepth?: number;
  budgetMs?: number;
  /** The vendor's neutral reply, used on every failure. */
  neutral: () => HookReply;
  /** What `GET /hook/<secret>` answers (`aep-steer doctor`): only a caller holding the secret learns it. */
  status?: () => Record<string, unknown>;
  /** Extra fields for `GET /healthz` (a bridge reports its relay and its source). */
  health?: () => Record<string, unknown>;
  /** `POST /lanes/<secret>` (`aep-steer run`): readies the native lanes and says where clients connect (D30). */
  openLanes?: () => Promise<Record<string, unknown>>;
  onError?: (e: SteeringError) => void;
}

export interface HookEndpoint {
  port: number;
  /** `http://127.0.0.1:{port}/hook/{secret}` */
  url: string;
  arrivals$: Observable<HookArrival>;
  close(): Promise<void>;
}

const HOLD_MARGIN_MS = 5000;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Starts writing a JSON reply; false when it could not be started (client gone, body not serialisable). */
function writeJsonNow(res: ServerResponse, body: unknown, status = 200): boolean {
  if (res.destroyed || res.writableEnded) return false;
  let text: string | undefined;
  try {
    text = body === undefined ? undefined : JSON.stringify(body);
  } catch {
    return false;
  }
  if (text === undefined) res.writeHead(status, { 'content-length': 0 }).end();
  else
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  return true;
}

const answered = Promise.resolve(true);
const unanswered = Promise.resolve(false);

/** Writes a JSON reply; resolves true once the response finished, false when it did not. */
function writeJson(res: ServerResponse, status: number, body: unknown): Promise<boolean> {
  if (!writeJsonNow(res, body, status)) return unanswered;
  // 'finish' and 'close' come after end() returns, so listening from here misses neither.
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off('finish', onFinish);
      res.off('close', onClose);
      resolve(ok);
    };
    const onFinish = () => done(true);
    const onClose = () => done(res.writableFinished);
    res.on('finish', onFinish);
    res.on('close', onClose);
  });
}

/** What the endpoint gives every open hook: the vendor's neutral reply, the error sink, the waiting set. */
interface OpenHookHost {
  neutral: () => HookReply;
  report(err: SteeringError): void;
  pending: Set<OpenHook>;
}

/**
 * One hook call from its first byte to its reply: it owns its response, its budget timer (armed
 * only if the reply waits) and its fail-open. Its `neutral()` is the only place the neutral body
 * is written.
 */
class OpenHook implements HookArrival {
  id = '';
  at = 0;
  body: Record<string, unknown> = {};
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  private closedP: Promise<void> | undefined;
  private watched = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly host: OpenHookHost,
  ) {}

  /** The body is read and is a JSON object: the hook gets its id and time, and can be handed over. */
  arrived(body: Record<string, unknown>, at: number): void {
    this.id = newId(at);
    this.at = at;
    this.body = body;
  }

  respond(reply: HookReply, wait = true): Promise<boolean> {
    if (this.settled) return unanswered;
    this.settle();
    const res = this.res;
    if (!wait) {
      if (writeJsonNow(res, reply.body)) return answered;
      // An unserialisable reply still owes the vendor an answer.
      void this.writeNeutral();
      return unanswered;
    }
    return writeJson(res, 200, reply.body).then((ok) => {
      if (!ok) void this.writeNeutral();
      return ok;
    });
  }

  neutral(): Promise<boolean> {
    if (this.settled) return unanswered;
    this.settle();
    return this.writeNeutral();
  }

  failOpen(err: SteeringError): Promise<boolean> {
    this.host.report(err);
    return this.neutral();
  }

  hold(ms: number): void {
    if (!this.settled) this.arm(ms + HOLD_MARGIN_MS);
  }

  get closed(): Promise<void> {
    this.closedP ??= this.res.closed
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.res.once('close', () => resolve()));
    return this.closedP;
  }

  /**
   * The reply was not written while the arrival was handed over: from here it waits, so the
   * budget runs (D15) and a close of the endpoint answers it with the neutral reply.
   */
  wait(budget: number): void {
    if (this.settled || this.watched) return;
    this.watched = true;
    this.host.pending.add(this);
    this.res.once('close', () => {
      this.host.pending.delete(this);
      if (this.timer) clearTimeout(this.timer);
    });
    // A hold may have set its longer budget already (D13).
    if (!this.timer) this.arm(budget);
  }

  private arm(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), ms);
  }

  /** The endpoint closes while this reply still waits: the vendor gets the neutral one. */
  closing(): Promise<boolean> {
    return this.writeNeutral();
  }

  private expire(): void {
    if (this.settled) return;
    void this.failOpen(new SteeringError('HOOK_TIMEOUT', `hook reply not ready within its budget`));
  }

  private writeNeutral(): Promise<boolean> {
    const res = this.res;
    if (res.destroyed || res.headersSent) return unanswered;
    return writeJson(res, 200, this.host.neutral().body);
  }

  private settle(): void {
    this.settled = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

/** Starts listening on the loopback interface; `port: 0` picks a free port. */
export async function startHookEndpoint(opts: HookEndpointOptions): Promise<HookEndpoint> {
  const host = opts.host ?? '127.0.0.1';
  const limit = opts.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const budget = opts.budgetMs ?? DEFAULT_HOOK_BUDGET_MS;
  const report = (e: SteeringError) => opts.onError?.(e);
  let emit: ((a: HookArrival) => void) | undefined;
  const pending = new Set<OpenHook>();
  const openHooks: OpenHookHost = { neutral: opts.neutral, report, pending };

  function requestOnEnd(hook: OpenHook, chunks: Buffer[]): void {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (cause) {
      void hook.failOpen(new SteeringError('HOOK_BODY_INVALID', 'hook body is not JSON', { cause }));
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      void hook.failOpen(new SteeringError('HOOK_BODY_INVALID', 'hook body is not a JSON object'));
      return;
    }
    if (!emit) {
      void hook.failOpen(new SteeringError('HOOK_TIMEOUT', 'hook endpoint has no consumer'));
      return;
    }
    const input = body as Record<string, unknown>;
    recordShape('hook', input.hook_event_name ?? input.hookEventName ?? input.hook, input);
    hook.arrived(input, Date.now());
    emit(hook);
    // A moment answered while it was handed over (D7–D8) needs no timer and no listener; the
    // others wait for their step's reply within the budget.
    hook.wait(budget);
  }

  function serverOnRequest(req: IncomingMessage, res: ServerResponse): void {
    if (routeOther(req, res, opts)) return;
    const hook = new OpenHook(res, openHooks);
    readBody(req, hook, limit, opts.maxDepth ?? DEFAULT_MAX_DEPTH, (chunks) => requestOnEnd(hook, chunks));
  }

  const server: Server = createServer(serverOnRequest);
  await listen(server, opts.port, host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;

  const arrivals$ = new Observable<HookArrival>((subscriber) => {
    emit = (a) => subscriber.next(a);
    return () => {
      emit = undefined;
    };
  }).pipe(share());

  return {
    port,
    url: `http://${host}:${port}/hook/${opts.secret}`,
    arrivals$,
    close: () =>
      new Promise<void>((resolve) => {
        emit = undefined;
        server.close(() => resolve());
        // Held replies still owe the vendor an answer: the neutral one.
        void Promise.all([...pending].map((hook) => hook.closing())).then(() => server.closeAllConnections());
      }),
  };
}

/** The request is `method /<route>/<secret>` with this adapter's secret (the secret compared last). */
const behindSecret = (
  req: IncomingMessage,
  parts: readonly string[],
  method: string,
  route: string,
  secret: string,
): boolean => req.method === method && parts.length === 3 && parts[1] === route && sameSecret(parts[2] ?? '', secret);

/**
 * Answers every request that is not a hook POST under the secret: the health route, the status
 * and lanes routes behind the secret, and 404 for the rest (D15). False leaves it to the hook path.
 */
function routeOther(req: IncomingMessage, res: ServerResponse, opts: HookEndpointOptions): boolean {
  // The path only: a query string is ignored, as before, without a URL parse per hook.
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  const pathname = q === -1 ? raw : raw.slice(0, q);
  if (req.method === 'GET' && pathname === '/healthz') {
    void writeJson(res, 200, { ok: true, ...opts.health?.() });
    return true;
  }
  const parts = pathname.split('/');
  if (opts.status !== undefined && behindSecret(req, parts, 'GET', 'hook', opts.secret)) {
    void writeJson(res, 200, opts.status());
    return true;
  }
  if (opts.openLanes !== undefined && behindSecret(req, parts, 'POST', 'lanes', opts.secret)) {
    req.resume();
    opts.openLanes().then(
      (body) => void writeJson(res, 200, body),
      (err: unknown) => void writeJson(res, 503, { error: 'lane-unavailable', detail: String(err) }),
    );
    return true;
  }
  // Wrong secret or path: 404, and nothing reaches any session (D15).
  if (!behindSecret(req, parts, 'POST', 'hook', opts.secret)) {
    req.resume();
    void writeJson(res, 404, { error: 'not-found' });
    return true;
  }
  return false;
}

/** Reads a hook's body as it arrives, refusing one over `limit` bytes or nested past `maxDepth` unparsed (D24). */
function readBody(
  req: IncomingMessage,
  hook: OpenHook,
  limit: number,
  maxDepth: number,
  onEnd: (chunks: Buffer[]) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  const guard = new DepthGuard(maxDepth);
  req.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > limit) {
      over = true;
      void hook.failOpen(new SteeringError('HOOK_BODY_INVALID', `hook body exceeds ${limit} bytes`));
      return;
    }
    if (!guard.feed(c)) {
      over = true;
      chunks.length = 0;
      void hook.failOpen(
        new SteeringError('HOOK_BODY_INVALID', `hook body nests deeper than ${maxDepth} levels; not parsed`),
      );
      return;
    }
    chunks.push(c);
  });
  req.on('error', (cause) => {
    void hook.failOpen(new SteeringError('HOOK_BODY_INVALID', 'hook body could not be read', { cause }));
  });
  req.on('end', () => {
    if (!over) onEnd(chunks);
  });
}

/** Listens on `host`; a port in use is PORT_IN_USE. */
async function listen(server: Server, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new SteeringError('PORT_IN_USE', `port ${port} on ${host} is in use`, { cause: err })
          : err,
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
