// A mock Anthropic Messages API on loopback (vendor-clis-observed §5.1): records every request,
// answers with scripted turns as SSE (or one JSON message when `stream` is false), and can hold a
// matching request until the test releases it, so a test can sequence hooks and commands exactly.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  index: number;
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Parsed JSON body (undefined for an empty or non-JSON body). */
  body: MessagesBody | undefined;
  /** The raw body text: search this for hook context, wherever the CLI placed it. */
  raw: string;
}

export interface MessagesBody {
  model?: string;
  stream?: boolean;
  tools?: { name: string }[];
  messages?: { role: string; content: unknown }[];
  [k: string]: unknown;
}

export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

export interface Turn {
  content: Block[];
  stop_reason?: 'end_turn' | 'tool_use';
}

/** Decides the reply from the request alone (stateless, §5). */
export type Script = (body: MessagesBody, request: RecordedRequest) => Turn;

export interface Hold {
  /** Resolves with the held request once it arrives. */
  arrived: Promise<RecordedRequest>;
  /** Lets the held request's reply go out. */
  release(): void;
}

export interface MockAnthropic {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests to `/v1/messages` only. */
  messages(): RecordedRequest[];
  /** Holds the next `/v1/messages` request that matches (all when no predicate). */
  hold(match?: (r: RecordedRequest) => boolean): Hold;
  setScript(script: Script): void;
  close(): Promise<void>;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (b && typeof b === 'object' && 'text' in b ? String((b as { text: unknown }).text) : '')).join('') : '';

/** Number of tool_result blocks in the conversation: the step of a tool script. */
export function toolResultCount(body: MessagesBody): number {
  let n = 0;
  for (const msg of body.messages ?? []) {
    if (!Array.isArray(msg.content)) continue;
    for (const b of msg.content) if (b && typeof b === 'object' && (b as { type?: unknown }).type === 'tool_result') n += 1;
  }
  return n;
}

/** The first user message's text (where `claude -p "<prompt>"` puts the prompt, among reminders). */
export const firstUserText = (body: MessagesBody): string => textOf(body.messages?.find((m) => m.role === 'user')?.content);

/** Runs each command with Bash in turn, then answers with text (one tool call per request). */
export const bashThenText = (commands: string[], finalText = 'All done.'): Script => (body) => {
  if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
  const step = toolResultCount(body);
  if (step < commands.length) {
    return { content: [{ type: 'tool_use', name: 'Bash', input: { command: commands[step]!, description: `step ${step + 1}` } }], stop_reason: 'tool_use' };
  }
  return { content: [{ type: 'text', text: finalText }], stop_reason: 'end_turn' };
};

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export async function startMockAnthropic(opts: { script?: Script } = {}): Promise<MockAnthropic> {
  let script: Script = opts.script ?? bashThenText(['echo hi']);
  const requests: RecordedRequest[] = [];
  const holds: { match: (r: RecordedRequest) => boolean; arrive: (r: RecordedRequest) => void; gate: Promise<void> }[] = [];
  let toolIds = 0;
  let messageIds = 0;

  function reply(res: ServerResponse, body: MessagesBody, turn: Turn): void {
    messageIds += 1;
    const model = body.model ?? 'claude-mock';
    const blocks = turn.content.map((b) =>
      b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_mock${String(++toolIds).padStart(6, '0')}` } : b,
    );
    const stop = turn.stop_reason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const id = `msg_mock${String(messageIds).padStart(6, '0')}`;
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content: blocks, stop_reason: stop, stop_sequence: null, usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    sse(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } });
    sse(res, 'ping', { type: 'ping' });
    blocks.forEach((b, index) => {
      if (b.type === 'text') {
        sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
      } else {
        sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
      }
      sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    });
    sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: MessagesBody | undefined;
    try {
      body = raw === '' ? undefined : (JSON.parse(raw) as MessagesBody);
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      headers[k] = /key|authorization/i.test(k) ? '[redacted]' : String(v);
    }
    const recorded: RecordedRequest = { index: requests.length, method: req.method ?? 'GET', url: req.url ?? '/', headers, body, raw };
    requests.push(recorded);
    const path = (req.url ?? '/').split('?')[0];

    if (req.method === 'POST' && path === '/v1/messages' && body !== undefined) {
      const i = holds.findIndex((h) => h.match(recorded));
      if (i >= 0) {
        const [h] = holds.splice(i, 1);
        h!.arrive(recorded);
        await h!.gate;
      }
      let turn: Turn;
      try {
        turn = script(body, recorded);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `mock script failed: ${String(err)}` } }));
        return;
      }
      reply(res, body, turn);
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.method === 'HEAD' ? undefined : '{}');
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    messages: () => requests.filter((r) => r.method === 'POST' && r.url.split('?')[0] === '/v1/messages'),
    hold(match = () => true) {
      let arrive!: (r: RecordedRequest) => void;
      let release!: () => void;
      const arrived = new Promise<RecordedRequest>((r) => (arrive = r));
      const gate = new Promise<void>((r) => (release = r));
      holds.push({ match, arrive, gate });
      return { arrived, release };
    },
    setScript(s) {
      script = s;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
