// The OpenHands agent server's REST surface, as the bridge uses it (openhands-agent-server §2):
// discovery reads, and the five writes of the control gate. Every request carries
// `X-Session-API-Key` when a key is configured. A write's result is a value, never a throw, so the
// session actor can turn it into exactly one ack.
import { SteeringError } from '../../protocol/errors.js';

export interface ConversationInfo {
  id: string;
  execution_status?: string;
}

/** How a REST write ended: 2xx, an HTTP refusal (status and the server's detail), or no answer. */
export type WriteResult =
  | { kind: 'ok'; status: number }
  /** No answer within the budget: the write may still land. */
  | { kind: 'timeout'; detail: string }
  | { kind: 'http'; status: number; detail: string }
  | { kind: 'unreachable'; detail: string };

export interface AgentServerOptions {
  /** `http://host:port` of the agent server. */
  url: string;
  /** The session API key (`OH_SESSION_API_KEYS_0` on the server); none when the server is open. */
  key?: string;
  /** Per-request budget. */
  timeoutMs?: number;
}

const DETAIL_CAP = 200;

export class AgentServer {
  readonly base: string;
  constructor(private readonly opts: AgentServerOptions) {
    this.base = opts.url.replace(/\/+$/, '');
  }

  private headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = {};
    if (json) h['content-type'] = 'application/json';
    if (this.opts.key !== undefined) h['x-session-api-key'] = this.opts.key;
    return h;
  }

  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method,
      headers: this.headers(body !== undefined),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 8000),
    });
  }

  /** Every conversation, following `next_page_id`. Throws SOURCE_UNAUTHORIZED / SOURCE_UNREACHABLE. */
  async conversations(): Promise<ConversationInfo[]> {
    const out: ConversationInfo[] = [];
    let page: string | null = null;
    for (let i = 0; i < 1000; i += 1) {
      const q = new URLSearchParams({ limit: '100' });
      if (page !== null) q.set('page_id', page);
      let res: Response;
      try {
        res = await this.request('GET', `/api/conversations/search?${q}`);
      } catch (cause) {
        throw new SteeringError(
          'SOURCE_UNREACHABLE',
          `OpenHands agent server at ${this.base} is not answering: ${(cause as Error).message}`,
          { cause },
        );
      }
      if (res.status === 401) {
        throw new SteeringError(
          'SOURCE_UNAUTHORIZED',
          `OpenHands agent server at ${this.base} refused the session API key (401): give the bridge one of the server's OH_SESSION_API_KEYS_* with --server-key or AEP_OPENHANDS_KEY`,
        );
      }
      if (!res.ok)
        throw new SteeringError(
          'SOURCE_UNREACHABLE',
          `OpenHands agent server at ${this.base} answered ${res.status} to conversation search`,
        );
      const body = (await res.json()) as { items?: unknown; next_page_id?: unknown };
      for (const item of Array.isArray(body.items) ? body.items : []) {
        const id = (item as { id?: unknown }).id;
        if (typeof id === 'string' && id !== '') out.push(item as ConversationInfo);
      }
      page = typeof body.next_page_id === 'string' && body.next_page_id !== '' ? body.next_page_id : null;
      if (page === null) break;
    }
    return out;
  }

  private async write(path: string, body: unknown): Promise<WriteResult> {
    let res: Response;
    try {
      res = await this.request('POST', path, body);
    } catch (cause) {
      if ((cause as Error).name === 'TimeoutError')
        return { kind: 'timeout', detail: 'agent server gave no answer in time' };
      return { kind: 'unreachable', detail: `agent server not answering: ${(cause as Error).message}` };
    }
    if (res.ok) {
      await res.body?.cancel();
      return { kind: 'ok', status: res.status };
    }
    let detail = '';
    try {
      const j = (await res.json()) as { detail?: unknown };
      detail = typeof j.detail === 'string' ? j.detail : JSON.stringify(j.detail ?? '');
    } catch {
      detail = res.statusText;
    }
    return { kind: 'http', status: res.status, detail: detail.slice(0, DETAIL_CAP) };
  }

  private conv(id: string, rest: string): string {
    return `/api/conversations/${encodeURIComponent(id)}${rest}`;
  }

  /** Appends a user message. `run` is pinned false: an input never starts, resumes or approves work (D29). */
  sendMessage(id: string, text: string): Promise<WriteResult> {
    return this.write(this.conv(id, '/events'), { role: 'user', content: [{ type: 'text', text }], run: false });
  }

  /** D43: appends a user message and runs the loop with it (`run: true`): only for a start asked for. */
  startWith(id: string, text: string): Promise<WriteResult> {
    return this.write(this.conv(id, '/events'), { role: 'user', content: [{ type: 'text', text }], run: true });
  }

  respondToConfirmation(id: string, accept: boolean, reason?: string): Promise<WriteResult> {
    return this.write(
      this.conv(id, '/events/respond_to_confirmation'),
      reason === undefined ? { accept } : { accept, reason },
    );
  }

  pause(id: string): Promise<WriteResult> {
    return this.write(this.conv(id, '/pause'), {});
  }

  /** `POST /run`: resumes a paused conversation (the gate forwards it only from paused). */
  run(id: string): Promise<WriteResult> {
    return this.write(this.conv(id, '/run'), {});
  }

  interrupt(id: string): Promise<WriteResult> {
    return this.write(this.conv(id, '/interrupt'), {});
  }

  /** `ws://…/sockets/events/{id}` with the resend mode; the key goes in the first frame, never the URL. */
  socketUrl(id: string, since?: string): string {
    const u = new URL(`${this.base}/sockets/events/${encodeURIComponent(id)}`);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    if (since === undefined) u.searchParams.set('resend_mode', 'all');
    else {
      u.searchParams.set('resend_mode', 'since');
      u.searchParams.set('after_timestamp', since);
    }
    return u.toString();
  }

  get key(): string | undefined {
    return this.opts.key;
  }
}
