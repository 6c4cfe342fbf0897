// Starts the console: the page server on 127.0.0.1 under a secret path made anew at each start
// (like a notebook server's token URL), a live board fed by one relay connection, and the page's
// actions sent on that same connection. With notify targets it pushes when a session waits, with
// one-tap answer links served outside the secret path (each link is its own credential).
import { newSecret } from '../protocol/secret.js';
import { followRelay, type Follower } from '../consumer/follow.js';
import { startInspectServer, type InspectServer } from '../inspect/server.js';
import { Notifier, type NotifierOptions } from '../notify/notifier.js';
import type { NotifyTarget } from '../notify/targets.js';
import { consoleActions } from './actions.js';
import { AnswerLinks, DEFAULT_LINK_TTL_MS } from '../notify/answer-links.js';
import { ANSWER_PATH, serveAnswer } from './answer-page.js';
import { appFiles } from './app-manifest.js';
import { CONSOLE_HTML } from './page.js';
import { StopBoard } from './stop-board.js';
import { phoneDevices, type PhoneHandle, type PhoneOptions } from './phone.js';

export const DEFAULT_CONSOLE_PORT = 8791;
export const DEFAULT_CONSOLE_SENDER = 'aep-steer-console';

export interface ConsoleOptions {
  relay: string;
  token?: string;
  sender?: string;
  port: number;
  host?: string;
  /** Where pushes go (`--notify`). */
  notify?: NotifyTarget[];
  /** The address a phone uses (a TLS-terminating proxy or tunnel); every link is made with it. */
  publicUrl?: string;
  /** Serve HTTPS with this PEM certificate and key (a LAN bind). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** How long an answer link lives at most (default 10 minutes). */
  linkTtlMs?: number;
  /** Push tuning, for tests: grace before a push, retry policy. */
  notifyTuning?: Pick<NotifierOptions, 'graceMs' | 'retry'>;
  /** Where a failed delivery is reported (stderr by default). */
  warn?: (message: string) => void;
  /** Paired devices, pairing and Web Push: where their files live, push tuning for tests. */
  phone?: PhoneOptions;
}

export interface ConsoleHandle {
  /** The page's URL, secret included: whoever has it may steer through this console. */
  url: string;
  /** The page's URL on the address the server listens on (the same as url without --public-url). */
  localUrl: string;
  server: InspectServer;
  follower: Follower;
  /** The console's paired devices and their pairing codes. */
  phone: PhoneHandle;
  close(): Promise<void>;
}

export async function startConsole(opts: ConsoleOptions): Promise<ConsoleHandle> {
  const secret = newSecret(24);
  const sender = opts.sender ?? DEFAULT_CONSOLE_SENDER;
  const board = new StopBoard(opts.relay);
  const links = new AnswerLinks(opts.linkTtlMs ?? DEFAULT_LINK_TTL_MS);
  let follower: Follower | undefined;
  const relayCx = { consumer: () => follower?.consumer(), sender, relayUrl: opts.relay };
  const actions = consoleActions(relayCx);
  // D46: what a one-tap link answers is recorded as surface `link`; D48: the adapter then refuses a risky allow.
  const linkRespond = consoleActions(relayCx, 'link')['respond']!;
  const phone = phoneDevices(board, actions, {
    ...opts.phone,
    secure: opts.tls !== undefined || opts.publicUrl?.startsWith('https:') === true,
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
    warn: opts.warn ?? ((m) => process.stderr.write(`console: ${m}\n`)),
  });
  const server = await startInspectServer(board, {
    port: opts.port,
    ...(opts.host ? { host: opts.host } : {}),
    ...(opts.tls ? { tls: opts.tls } : {}),
    ...(opts.publicUrl ? { publicUrl: opts.publicUrl } : {}),
    basePath: `/${secret}/`,
    page: CONSOLE_HTML,
    files: appFiles(),
    actions,
    routes: {
      [ANSWER_PATH]: (token, req, res) => serveAnswer({ links, respond: linkRespond }, token, req, res),
      ...phone.routes,
    },
  });
  board.onRows = () => {
    server.changed();
    phone.changed();
  };
  // Every link a person is handed names the public address when there is one.
  const root = opts.publicUrl
    ? new URL(opts.publicUrl.endsWith('/') ? opts.publicUrl : `${opts.publicUrl}/`)
    : new URL('/', server.url);
  const url = new URL(`${secret}/`, root).toString();
  phone.started(root.toString(), server.url);
  const targets = opts.notify ?? [];
  const notifier =
    targets.length === 0
      ? undefined
      : new Notifier({
          targets,
          links,
          consoleUrl: (session, request) =>
            `${url}#session=${encodeURIComponent(session)}${request ? `&request=${encodeURIComponent(request)}` : ''}`,
          answerUrl: (token) => new URL(`${ANSWER_PATH.slice(1)}${token}`, root).toString(),
          queued: (session) => board.snapshot().sessions.find((s) => s.session === session)?.queue.length ?? 0,
          warn: opts.warn ?? ((m) => process.stderr.write(`console: ${m}\n`)),
          ...opts.notifyTuning,
        });
  const watchLiveness = targets.some((t) => t.on.includes('offline'));
  follower = followRelay(board, {
    url: opts.relay,
    agent: sender,
    ...(opts.token ? { token: opts.token } : {}),
    onEvent: (e) => {
      notifier?.observe(e);
      phone.observe(e);
    },
    onLive: () => {
      notifier?.arm();
      phone.arm();
    },
    onChange: () => {
      server.changed();
      phone.changed();
      if (watchLiveness) notifier?.liveness(board.snapshot().sessions);
    },
  });
  const f = follower;
  return {
    url,
    localUrl: server.url,
    server,
    follower: f,
    phone: phone.handle,
    async close() {
      await phone.close();
      await notifier?.close();
      await f.close();
      await server.close();
    },
  };
}
