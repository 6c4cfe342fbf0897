// What one push says, built from one event already lowered to the target's capture ceiling, and
// how each kind of target wants it: ntfy's JSON publish (title, priority, tags, click, action
// buttons) or the webhook's own documented body (the notice itself).
import type { AepEvent, CaptureLevel } from '../protocol/envelope.js';
import type { Post } from './deliver.js';
import type { NotifyKind, NotifyTarget, TargetKind } from './targets.js';

const NOTICE_VERSION = 1;

export interface Notice {
  type: 'aep-steer.notice';
  version: typeof NOTICE_VERSION;
  kind: NotifyKind;
  session: string;
  /** The agent that spoke (the adapter's vendor token). */
  vendor: string;
  /** The session's working directory, present only at a ceiling of redacted or above. */
  cwd?: string;
  title: string;
  message: string;
  /** The ceiling this notice was built under. */
  capture: CaptureLevel;
  time: string;
  console_url: string;
  /** `risky`: D48, the rule that marks it; its allow is not offered as a link (`open` instead). */
  request?: { id: string; kind?: string; asks?: string; options?: string[]; risky?: string };
  /** One-tap answers by option id: POST to answer, GET shows what the link would do. */
  answers?: Record<string, string>;
  instruction?: { id: string; outcome: 'dropped' | 'rejected'; reason?: string };
}

export interface NoticeInput {
  kind: NotifyKind;
  /** The triggering event, lowered to the target's ceiling. */
  event: AepEvent;
  capture: CaptureLevel;
  session: string;
  vendor: string;
  cwd?: string;
  consoleUrl: string;
  answers?: Record<string, string>;
  /** For ended-queued: how many instructions the end left undelivered. */
  queued?: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** D48: the rule a request is risky by, from its (metadata) `risky` field. */
export const riskyRule = (e: AepEvent): string | undefined =>
  str((e.data?.['risky'] as { rule?: unknown } | undefined)?.rule);

const texts: Record<NotifyKind, (i: NoticeInput) => { title: string; message: string }> = {
  attention: (i) => {
    const kind = str(i.event.data?.['kind']);
    const asks =
      str(i.event.data?.['prompt']) ??
      (i.event.subject ? `${i.vendor} asks about ${i.event.subject}` : 'Open the console to see what it asks.');
    const rule = riskyRule(i.event);
    return {
      title: `${i.vendor} waits for you${kind ? `: ${kind}` : ''}${rule ? ' (risky)' : ''}`,
      // D48: why a risky request has no Allow button: it needs two approvers, in the console.
      message: rule
        ? `${asks}\nRisky (${rule}): an allow needs two approvers, so this notice offers Deny and Open; allow it in the console.`
        : asks,
    };
  },
  dropped: (i) => {
    const reason = str(i.event.data?.['reason']);
    const rejected = i.event.type === 'control.rejected';
    return {
      title: `${i.vendor}: a command was ${rejected ? 'rejected' : 'dropped'}`,
      message: `${rejected ? 'Rejected' : 'Dropped'}${reason ? ` (${reason})` : ''}; nothing reached the agent.`,
    };
  },
  'ended-queued': (i) => ({
    title: `${i.vendor}: the session ended with instructions queued`,
    message: `${i.queued ?? 0} instruction${i.queued === 1 ? '' : 's'} never reached the agent.`,
  }),
  offline: (i) => ({
    title: `${i.vendor}: the adapter went offline`,
    message: 'The session has no live claimant on the relay; steering waits until its adapter is back.',
  }),
};

export function buildNotice(i: NoticeInput): Notice {
  const n: Notice = {
    type: 'aep-steer.notice',
    version: NOTICE_VERSION,
    kind: i.kind,
    session: i.session,
    vendor: i.vendor,
    ...texts[i.kind](i),
    capture: i.capture,
    time: i.event.time,
    console_url: i.consoleUrl,
  };
  if (i.cwd !== undefined) n.cwd = i.cwd;
  if (i.kind === 'attention') {
    const d = i.event.data ?? {};
    const req: NonNullable<Notice['request']> = { id: i.event.id };
    const kind = str(d['kind']);
    if (kind) req.kind = kind;
    const asks = str(d['prompt']);
    if (asks) req.asks = asks;
    if (Array.isArray(d['options']))
      req.options = d['options']
        .map((o) => str((o as { id?: unknown } | null)?.id))
        .filter((o): o is string => o !== undefined);
    const rule = riskyRule(i.event);
    if (rule) req.risky = rule;
    n.request = req;
    if (i.answers && Object.keys(i.answers).length > 0) n.answers = i.answers;
  }
  if (i.kind === 'dropped') {
    const reason = str(i.event.data?.['reason']);
    const id = str(i.event.cause) ?? i.event.id;
    n.instruction = {
      id,
      outcome: i.event.type === 'control.rejected' ? 'rejected' : 'dropped',
      ...(reason ? { reason } : {}),
    };
  }
  return n;
}

const PRIORITY: Record<NotifyKind, number> = { attention: 4, dropped: 3, 'ended-queued': 3, offline: 3 };
const TAGS: Record<NotifyKind, string[]> = {
  attention: ['bell'],
  dropped: ['warning'],
  'ended-queued': ['warning'],
  offline: ['electric_plug'],
};
const label = (option: string): string => (option === 'allow' ? 'Allow' : option === 'deny' ? 'Deny' : option);

/** ntfy takes at most three action buttons. */
const NTFY_ACTIONS = 3;

/** How each kind of target is posted to. */
export const RENDER: Record<TargetKind, (t: NotifyTarget, n: Notice) => Post> = {
  // JSON publish: posted to the server's root with the topic named in the body (docs.ntfy.sh/publish).
  ntfy: (t, n) => {
    const topicUrl = new URL(t.url);
    const topic = topicUrl.pathname.replace(/\/+$/, '').split('/').pop()!;
    const root = new URL('.', topicUrl.href.replace(/\/+$/, ''));
    const answers: Record<string, unknown>[] = Object.entries(n.answers ?? {}).map(([option, url]) => ({
      action: 'http',
      label: label(option),
      url,
      method: 'POST',
      clear: true,
    }));
    // D48: a risky request is allowed in the console, never by a tap: its notice opens it.
    if (n.request?.risky !== undefined) answers.push({ action: 'view', label: 'Open', url: n.console_url });
    const actions = answers.slice(0, NTFY_ACTIONS);
    const body = {
      topic,
      title: n.title,
      message: n.message,
      priority: PRIORITY[n.kind],
      tags: TAGS[n.kind],
      click: n.console_url,
      ...(actions.length > 0 ? { actions } : {}),
    };
    return { url: root.toString(), headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  },
  webhook: (t, n) => ({ url: t.url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(n) }),
};
