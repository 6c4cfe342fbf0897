// A mock Anthropic Messages API on loopback (vendor-clis-observed §5.1): records every request,
// answers with scripted turns as SSE (or one JSON message when `stream` is false), and can hold a
// matching request until the test releases it, so a test can sequence hooks and commands exactly.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toolResultCount, writeMessage, type MessageBlock } from '../../src/demo/mock-model.js';
import { requestHolds, type Hold as RequestHold } from './request-holds.js';

export { toolResultCount };

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

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

export interface Turn {
  content: Block[];
  stop_reason?: 'end_turn' | 'tool_use';
}

/** Decides the reply from the request alone (stateless, §5). */
export type Script = (body: MessagesBody, request: RecordedRequest) => Turn;

type Hold = RequestHold<RecordedRequest>;

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
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .map((b) => (b && typeof b === 'object' && 'text' in b ? String((b as { text: unknown }).text) : ''))
          .join('')
      : '';

/** The first user message's text (where `claude -p "<prompt>"` puts the prompt, among reminders). */
export const firstUserText = (body: MessagesBody): string =>
  textOf(body.messages?.find((m) => m.role === 'user')?.content);

/** Runs each command with Bash in turn, then answers with text (one tool call per request). */
export const bashThenText =
  (commands: string[], finalText = 'All done.'): Script =>
  (body) => {
    if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
    const step = toolResultCount(body);
    if (step < commands.length) {
      return {
        content: [
          { type: 'tool_use', name: 'Bash', input: { command: commands[step]!, description: `step ${step + 1}` } },
        ],
        stop_reason: 'tool_use',
      };
    }
    return { content: [{ type: 'text', text: finalText }], stop_reason: 'end_turn' };
  };

export async function startMockAnthropic(opts: { script?: Script } = {}): Promise<MockAnthropic> {
  let script: Script = opts.script ?? bashThenText(['echo hi']);
  const requests: RecordedRequest[] = [];
  const holds = requestHolds<RecordedRequest>();
  let toolIds = 0;
  let messageIds = 0;

  function reply(res: ServerResponse, body: MessagesBody, turn: Turn): void {
    messageIds += 1;
    const blocks: MessageBlock[] = turn.content.map((b) =>
      b.type === 'tool_use' ? { ...b, id: b.id ?? `toolu_mock${String(++toolIds).padStart(6, '0')}` } : b,
    );
    const stop = turn.stop_reason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
    writeMessage(res, {
      id: `msg_mock${String(messageIds).padStart(6, '0')}`,
      model: body.model ?? 'claude-mock',
      blocks,
      stop,
      stream: body.stream === true,
    });
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
    const recorded: RecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers,
      body,
      raw,
    };
    requests.push(recorded);
    const path = (req.url ?? '/').split('?')[0];

    if (req.method === 'POST' && path === '/v1/messages' && body !== undefined) {
      await holds.pass(recorded);
      let turn: Turn;
      try {
        turn = script(body, recorded);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'api_error', message: `mock script failed: ${String(err)}` },
          }),
        );
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
    hold: holds.hold,
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
