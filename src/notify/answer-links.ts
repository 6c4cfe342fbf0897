// One-tap answers: a link bound to one request and one answer, drawn from the CSPRNG (24
// base64url characters, 144 bits), good for one use, until the request ends, and for a bound
// (10 minutes by default). Using one spends every link of its request. What happened to a spent
// link is kept for a while, so a second tap is told why instead of "unknown link".
import type { AepEvent } from '../protocol/envelope.js';
import { newSecret } from '../protocol/secret.js';

export const DEFAULT_LINK_TTL_MS = 10 * 60_000;
const TOKEN_CHARS = 24;
/** A token is 24 characters of nanoid's alphabet; anything else is refused without a look-up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{24}$/;

export interface AnswerLink {
  token: string;
  session: string;
  request: string;
  option: string;
  expiresAt: number;
}

export type LinkUse =
  | { ok: true; link: AnswerLink }
  | { ok: false; status: number; reason: 'unknown' | 'used' | 'ended' | 'expired'; message: string };

interface Spent {
  why: LinkUse & { ok: false };
  forgetAt: number;
}

/** Why a request ended, as a person reads it on the page a spent link answers with. */
export function endedBecause(e: AepEvent): string | undefined {
  const data = e.data ?? {};
  if (e.type === 'attention.answered') {
    return data['via'] === 'oob'
      ? 'already answered at the agent'
      : `already answered through the relay (by ${e.agent})`;
  }
  if (e.type === 'attention.resolved') {
    return data['resolution'] === 'dismissed'
      ? 'dismissed at the agent (answered in its own screen, or its turn or session ended)'
      : 'already answered';
  }
  if (e.type === 'attention.timeout') return 'timed out at the agent';
  return undefined;
}

export class AnswerLinks {
  private readonly live = new Map<string, AnswerLink>();
  private readonly byRequest = new Map<string, string[]>();
  private readonly spent = new Map<string, Spent>();
  /** Requests that ended before any link was made for them. */
  private readonly endedRequests = new Map<string, { why: string; forgetAt: number }>();

  constructor(
    private readonly ttlMs = DEFAULT_LINK_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** One link per answer option; none when the request already ended. */
  mint(session: string, request: string, options: string[]): Record<string, string> {
    this.prune();
    if (this.endedRequests.has(request) || this.byRequest.has(request)) return {};
    const out: Record<string, string> = {};
    const expiresAt = this.now() + this.ttlMs;
    for (const option of options) {
      const token = newSecret(TOKEN_CHARS);
      this.live.set(token, { token, session, request, option, expiresAt });
      out[option] = token;
    }
    this.byRequest.set(request, Object.values(out));
    return out;
  }

  /** Spends a link: it is gone whatever the answer then does; so are the other links of its request. */
  take(token: string): LinkUse {
    this.prune();
    if (!TOKEN_SHAPE.test(token)) return unknown;
    const spent = this.spent.get(token);
    if (spent) return spent.why;
    const link = this.live.get(token);
    if (!link) return unknown;
    if (link.expiresAt <= this.now()) {
      this.retire(link.request, {
        ok: false,
        status: 410,
        reason: 'expired',
        message: 'This link expired; open the console to answer.',
      });
      return this.spent.get(token)!.why;
    }
    this.retire(link.request, {
      ok: false,
      status: 409,
      reason: 'used',
      message: `This request was already answered from a link (${link.option}).`,
    });
    return { ok: true, link };
  }

  /** What a link would do, without spending it (the page a GET shows). */
  peek(token: string): LinkUse {
    if (!TOKEN_SHAPE.test(token)) return unknown;
    const spent = this.spent.get(token);
    if (spent) return spent.why;
    const link = this.live.get(token);
    if (!link) return unknown;
    return link.expiresAt <= this.now()
      ? { ok: false, status: 410, reason: 'expired', message: 'This link expired; open the console to answer.' }
      : { ok: true, link };
  }

  /** The request ended (answered, dismissed, timed out): its links now say so. */
  ended(request: string, why: string): void {
    this.endedRequests.set(request, { why, forgetAt: this.now() + this.ttlMs * 2 });
    if (this.byRequest.has(request))
      this.retire(request, {
        ok: false,
        status: 409,
        reason: 'ended',
        message: `This request was ${why}; nothing was recorded from this link.`,
      });
  }

  /** How the request ended, if it did. */
  endOf(request: string): string | undefined {
    return this.endedRequests.get(request)?.why;
  }

  private retire(request: string, why: LinkUse & { ok: false }): void {
    const forgetAt = this.now() + this.ttlMs * 2;
    for (const t of this.byRequest.get(request) ?? []) {
      this.live.delete(t);
      // A link already spent keeps its first reason (a second tap after an answer says "used").
      if (!this.spent.has(t)) this.spent.set(t, { why, forgetAt });
    }
  }

  /** Forgets links long expired, so a console running for days holds a bounded set. */
  private prune(): void {
    const now = this.now();
    for (const [t, s] of this.spent) if (s.forgetAt <= now) this.spent.delete(t);
    for (const [r, s] of this.endedRequests) if (s.forgetAt <= now) this.endedRequests.delete(r);
    for (const [r, tokens] of this.byRequest) {
      if (tokens.every((t) => !this.live.has(t) && !this.spent.has(t))) this.byRequest.delete(r);
      else if (tokens.every((t) => (this.live.get(t)?.expiresAt ?? Infinity) <= now - this.ttlMs)) {
        for (const t of tokens) this.live.delete(t);
        this.byRequest.delete(r);
      }
    }
  }
}

const unknown: LinkUse = {
  ok: false,
  status: 404,
  reason: 'unknown',
  message: 'This answer link is not known to this console (mistyped, forged, or from an earlier start).',
};
