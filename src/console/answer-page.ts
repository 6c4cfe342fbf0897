// The pages behind the answer links (`/answer/<token>`, outside the console's secret path: the
// token is the credential). GET only describes what the link will do, so a link preview or a
// prefetch answers nothing; POST (ntfy's action button, or the page's own button) spends the link
// and answers through the console's respond action, as the console's identity.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Action } from '../inspect/server.js';
import { FRAME_HEADERS } from '../inspect/page-policy.js';
import { createHash } from 'node:crypto';
import type { AnswerLinks, LinkUse } from '../notify/answer-links.js';

export const ANSWER_PATH = '/answer/';

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:0;padding:24px;max-width:32rem;color:#1d232a}' +
  'h1{font-size:20px}p{overflow-wrap:anywhere}button{font:inherit;padding:12px 20px;min-height:48px;border-radius:8px;' +
  'border:1px solid #2f6fdb;background:#2f6fdb;color:#fff}';
/** The policy of a small form page: its one inline style by hash, posting only to itself, never framed. */
export const formPagePolicy = (style: string): string =>
  [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(style, 'utf8').digest('base64')}'`,
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
const POLICY = formPagePolicy(STYLE);

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, lines: string[], form?: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>` +
  `<h1 data-field="title">${escapeHtml(title)}</h1>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}` +
  (form ? `<form method="post"><button type="submit">${escapeHtml(form)}</button></form>` : '') +
  '</body></html>';

/** A form page (answer link, pairing): never framed, cached or sent on as a referrer; only its own style and form. */
export function sendFormPage(
  res: ServerResponse,
  policy: string,
  status: number,
  html: string,
  headers: Record<string, string> = {},
): void {
  for (const [k, v] of Object.entries(FRAME_HEADERS)) res.setHeader(k, v);
  res
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': policy,
      ...headers,
    })
    .end(html);
}

const send = (res: ServerResponse, status: number, html: string): void => sendFormPage(res, POLICY, status, html);

const label = (option: string): string => (option === 'allow' ? 'Allow' : option === 'deny' ? 'Deny' : option);

const refused = (res: ServerResponse, use: LinkUse & { ok: false }): void =>
  send(res, use.status, page(use.reason === 'unknown' ? 'Unknown link' : 'Nothing answered', [use.message]));

export interface AnswerPageContext {
  links: AnswerLinks;
  respond: Action;
}

/** Serves `/answer/<token>`; resolves once the answer (if any) is settled and the page written. */
export async function serveAnswer(
  ctx: AnswerPageContext,
  token: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // The body (if any) is never read: the link alone says what to answer.
  req.resume();
  if (req.method === 'GET' || req.method === 'HEAD') {
    const use = ctx.links.peek(token);
    if (!use.ok) return refused(res, use);
    const { link } = use;
    return send(
      res,
      200,
      page(
        `${label(link.option)} this request?`,
        [
          `Session ${link.session}, request ${link.request}.`,
          `The answer goes to the agent once you press ${label(link.option)}; the link then works no more.`,
        ],
        label(link.option),
      ),
    );
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'GET, HEAD, POST' }).end();
    return;
  }
  const use = ctx.links.take(token);
  if (!use.ok) return refused(res, use);
  const { link } = use;
  const out = await ctx.respond({ session: link.session, request: link.request, option: link.option });
  const body = out.body as { message?: string; error?: boolean; outcome?: string };
  const ok = body.error !== true && body.outcome === 'answered';
  send(
    res,
    ok ? 200 : 409,
    page(ok ? `${label(link.option)}: sent` : 'Not answered', [
      String(body.message ?? 'The console gave no answer.'),
      'Open the console for the session and its other requests.',
    ]),
  );
}
