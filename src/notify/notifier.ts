// Watches the console's stream and tells each target what it asked to hear about: a person
// waited for (`attention.requested`) always, and, opted in per target, a command dropped or
// rejected, a session ended with instructions undelivered, an adapter gone offline. A request
// is pushed once, after a short grace, so one answered at once (in the agent's own screen, or
// by another consumer) is never pushed at all. A target that cannot be reached is reported
// once until it works again; the console never waits on it.
import { downLevel } from '../protocol/capture.js';
import { AEP_VERSION, type AepEvent } from '../protocol/envelope.js';
import { endedBecause, type AnswerLinks } from './answer-links.js';
import { DEFAULT_RETRY, deliver, type RetryPolicy } from './deliver.js';
import { buildNotice, RENDER, riskyRule } from './notices.js';
import { isAllow } from '../machines/second-key.js';
import { targetLabel, type NotifyKind, type NotifyTarget } from './targets.js';

const DEFAULT_GRACE_MS = 300;

export interface NotifierOptions {
  targets: NotifyTarget[];
  links: AnswerLinks;
  /** The console's page for a session (and a request in it), at the address a phone uses. */
  consoleUrl(session: string, request?: string): string;
  answerUrl(token: string): string;
  /** Instructions still queued on the board for a session (a D25 resume window keeps them). */
  queued(session: string): number;
  warn(message: string): void;
  graceMs?: number;
  retry?: RetryPolicy;
}

/** What a session looks like to the offline check: who claims it, and whether it ended. */
export interface Liveness {
  session: string;
  claimants: number;
  state: string;
  agent?: string;
}

/** Request ids remembered (pushed, ended); the oldest are forgotten past this, so a long run stays bounded. */
const REMEMBERED = 10_000;

function remember(set: Set<string>, id: string): void {
  set.add(id);
  if (set.size > REMEMBERED) set.delete(set.values().next().value!);
}

const ENDS = new Set(['attention.answered', 'attention.resolved', 'attention.timeout']);
const DROPPED = /\.instruction\.dropped$/;
const REOPENED = /^(session\.started|session\.reopened|x\.[a-z0-9-]+\.session\.reopened)$/;

export class Notifier {
  private readonly scheduled = new Map<string, NodeJS.Timeout>();
  private readonly pushed = new Set<string>();
  private readonly ended = new Set<string>();
  private readonly started = new Map<string, AepEvent>();
  private readonly droppedAtEnd = new Map<string, number>();
  private readonly live = new Map<string, number>();
  private readonly failing = new Set<NotifyTarget>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  /** False while the subscription replays history: what happened before the console started is never pushed. */
  private armed = false;

  constructor(private readonly opts: NotifierOptions) {}

  /** The replay is through (the relay answered a request sent behind it): from now on events are news. */
  arm(): void {
    this.armed = true;
  }

  /** Every event the console's subscription folds, once each, in stream order. */
  observe(e: AepEvent): void {
    const session = e.session;
    if (session === undefined) return;
    if (REOPENED.test(e.type)) {
      if (e.type === 'session.started') this.started.set(session, e);
      this.droppedAtEnd.delete(session);
    }
    if (ENDS.has(e.type) && typeof e.subject === 'string') {
      remember(this.ended, e.subject);
      clearTimeout(this.scheduled.get(e.subject));
      this.scheduled.delete(e.subject);
      this.opts.links.ended(e.subject, endedBecause(e) ?? 'ended');
      return;
    }
    if (DROPPED.test(e.type) && e.data?.['reason'] === 'session-ended') {
      this.droppedAtEnd.set(session, (this.droppedAtEnd.get(session) ?? 0) + 1);
    }
    const live = this.armed;
    if (live && e.type === 'attention.requested') this.schedule(e, session);
    else if (live && (DROPPED.test(e.type) || e.type === 'control.rejected')) this.push('dropped', e, session);
    else if (e.type === 'session.ended') {
      const queued = (this.droppedAtEnd.get(session) ?? 0) + this.opts.queued(session);
      if (live && queued > 0) this.push('ended-queued', e, session, { queued });
      this.droppedAtEnd.delete(session);
    }
  }

  /** The roster as the board last saw it: a session whose claimants went to none, unended, is offline. */
  liveness(sessions: Liveness[]): void {
    if (!this.armed) return;
    for (const s of sessions) {
      const before = this.live.get(s.session);
      this.live.set(s.session, s.claimants);
      if (before === undefined || before === 0 || s.claimants > 0 || s.state === 'ended') continue;
      // No event says so (the roster does): the notice is made from a local record of it, never sent on.
      const e: AepEvent = {
        aep: AEP_VERSION,
        id: `offline-${s.session}`,
        type: 'console.offline',
        time: new Date().toISOString(),
        source: 'aep-steer-console',
        agent: s.agent ?? 'agent',
        session: s.session,
      };
      this.push('offline', e, s.session);
    }
  }

  private schedule(e: AepEvent, session: string): void {
    if (this.pushed.has(e.id) || this.scheduled.has(e.id) || this.ended.has(e.id)) return;
    const t = setTimeout(() => {
      this.scheduled.delete(e.id);
      if (this.ended.has(e.id) || this.pushed.has(e.id)) return;
      remember(this.pushed, e.id);
      // Answer links only where the request's own options are the answer (a permission's allow/deny).
      const offered = Array.isArray(e.data?.['options'])
        ? (e.data['options'] as { id?: unknown }[]).map((o) => o?.id).filter((o): o is string => typeof o === 'string')
        : [];
      // D48: no allow link for a risky request (the adapter refuses one from a link anyway).
      const options = riskyRule(e) === undefined ? offered : offered.filter((o) => !isAllow(o));
      const tokens = this.opts.links.mint(session, e.id, options);
      const answers = Object.fromEntries(Object.entries(tokens).map(([o, t]) => [o, this.opts.answerUrl(t)]));
      this.push('attention', e, session, { answers });
    }, this.opts.graceMs ?? DEFAULT_GRACE_MS);
    t.unref();
    this.scheduled.set(e.id, t);
  }

  private push(
    kind: NotifyKind,
    e: AepEvent,
    session: string,
    extra: { answers?: Record<string, string>; queued?: number } = {},
  ): void {
    for (const target of this.opts.targets) {
      if (!target.on.includes(kind)) continue;
      const event = downLevel(e, target.capture);
      const start = this.started.get(session);
      const cwd = start ? downLevel(start, target.capture).data?.['cwd'] : undefined;
      const notice = buildNotice({
        kind,
        event,
        capture: target.capture,
        session,
        vendor: e.agent,
        consoleUrl: this.opts.consoleUrl(session, kind === 'attention' ? e.id : undefined),
        ...(typeof cwd === 'string' ? { cwd } : {}),
        ...extra,
      });
      const p = this.send(target, RENDER[target.kind](target, notice));
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
  }

  private async send(target: NotifyTarget, post: Parameters<typeof deliver>[0]): Promise<void> {
    const r = await deliver(post, this.opts.retry ?? DEFAULT_RETRY, this.abort.signal);
    if (r.ok) {
      if (this.failing.delete(target)) this.opts.warn(`notify: ${targetLabel(target)} is reachable again`);
      return;
    }
    if (this.abort.signal.aborted || this.failing.has(target)) return;
    this.failing.add(target);
    this.opts.warn(
      `notify: could not deliver to ${targetLabel(target)} after ${r.tries} tries (${r.detail}); ` +
        'the console goes on, and further failures of this target are not reported until one gets through',
    );
  }

  /** Stops pending pushes and retries; resolves once none is in flight. */
  async close(): Promise<void> {
    for (const t of this.scheduled.values()) clearTimeout(t);
    this.scheduled.clear();
    this.abort.abort();
    await Promise.allSettled([...this.inflight]);
  }
}
