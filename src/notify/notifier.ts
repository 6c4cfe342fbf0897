// Watches the console's stream and tells each target what it asked to hear about: a person
// waited for (`attention.requested`) always, and, opted in per target, a command dropped or
// rejected, a session ended with instructions undelivered, an adapter gone offline. A request
// is pushed once, after a short grace, so one answered at once (in the agent's own screen, or
// by another consumer) is never pushed at all. A target that cannot be reached is reported
// once until it works again; the console never waits on it.
import { downLevel } from '../protocol/capture.js';
import type { AepEvent } from '../protocol/envelope.js';
import { endedBecause, type AnswerLinks } from '../console/answer-links.js';
import { DEFAULT_RETRY, deliver, type RetryPolicy } from './deliver.js';
import { buildNotice, RENDER } from './notices.js';
import { targetLabel, type NotifyKind, type NotifyTarget } from './targets.js';

export const DEFAULT_GRACE_MS = 300;

export interface NotifierOptions {
  targets: NotifyTarget[];
  links: AnswerLinks;
  /** The console's page for a session (and a request in it), at the address a phone uses. */
  consoleUrl(session: string, request?: string): string;
  answerUrl(token: string): string;
  /** Instructions still queued on the board for a session (a D25 resume window keeps them). */
  queued(session: string): number;
  warn(message: string): void;
  /** Events older than this (ms since the epoch) are history replayed at start: never pushed. */
  since?: number;
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
  private readonly since: number;

  constructor(private readonly opts: NotifierOptions) {
    this.since = opts.since ?? Date.now() - 5000;
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
      this.ended.add(e.subject);
      clearTimeout(this.scheduled.get(e.subject));
      this.scheduled.delete(e.subject);
      this.opts.links.ended(e.subject, endedBecause(e) ?? 'ended');
      return;
    }
    if (DROPPED.test(e.type) && e.data?.['reason'] === 'session-ended') {
      this.droppedAtEnd.set(session, (this.droppedAtEnd.get(session) ?? 0) + 1);
    }
    if (Date.parse(e.time) < this.since) return;
    if (e.type === 'attention.requested') this.schedule(e, session);
    else if (DROPPED.test(e.type) || e.type === 'control.rejected') this.push('dropped', e, session);
    else if (e.type === 'session.ended') {
      const queued = (this.droppedAtEnd.get(session) ?? 0) + this.opts.queued(session);
      if (queued > 0) this.push('ended-queued', e, session, { queued });
    }
  }

  /** The roster as the board last saw it: a session whose claimants went to none, unended, is offline. */
  liveness(sessions: Liveness[]): void {
    for (const s of sessions) {
      const before = this.live.get(s.session);
      this.live.set(s.session, s.claimants);
      if (before === undefined || before === 0 || s.claimants > 0 || s.state === 'ended') continue;
      const e: AepEvent = { aep: '0.1', id: `offline-${s.session}`, time: new Date().toISOString(), source: 'aep-steer-console', agent: s.agent ?? 'agent', type: 'session.offline', session: s.session } as AepEvent;
      this.push('offline', e, s.session);
    }
  }

  private schedule(e: AepEvent, session: string): void {
    if (this.pushed.has(e.id) || this.scheduled.has(e.id) || this.ended.has(e.id)) return;
    const t = setTimeout(() => {
      this.scheduled.delete(e.id);
      if (this.ended.has(e.id) || this.pushed.has(e.id)) return;
      this.pushed.add(e.id);
      // Answer links only where the request's own options are the answer (a permission's allow/deny).
      const options = Array.isArray(e.data?.['options']) ? (e.data['options'] as { id?: unknown }[]).map((o) => o?.id).filter((o): o is string => typeof o === 'string') : [];
      const tokens = this.opts.links.mint(session, e.id, options);
      const answers = Object.fromEntries(Object.entries(tokens).map(([o, t]) => [o, this.opts.answerUrl(t)]));
      this.push('attention', e, session, { answers });
    }, this.opts.graceMs ?? DEFAULT_GRACE_MS);
    t.unref();
    this.scheduled.set(e.id, t);
  }

  private push(kind: NotifyKind, e: AepEvent, session: string, extra: { answers?: Record<string, string>; queued?: number } = {}): void {
    for (const target of this.opts.targets) {
      if (!target.on.includes(kind)) continue;
      const event = downLevel(e, target.capture);
      const start = this.started.get(session);
      const cwd = start ? downLevel(start, target.capture).data?.['cwd'] : undefined;
      const notice = buildNotice({
        kind, event, capture: target.capture, session, vendor: e.agent, consoleUrl: this.opts.consoleUrl(session, kind === 'attention' ? e.id : undefined),
        ...(typeof cwd === 'string' ? { cwd } : {}), ...extra,
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
    this.opts.warn(`notify: could not deliver to ${targetLabel(target)} after ${r.tries} tries (${r.detail}); `
      + 'the console goes on, and further failures of this target are not reported until one gets through');
  }

  /** Stops pending pushes and retries; resolves once none is in flight. */
  async close(): Promise<void> {
    for (const t of this.scheduled.values()) clearTimeout(t);
    this.scheduled.clear();
    this.abort.abort();
    await Promise.allSettled([...this.inflight]);
  }
}
