// A small stand-in for the Anthropic Messages API on loopback, for the demo's real-CLI run: the
// first turn asks for one Bash call, the next one answers with text. It records every request
// body so the demo can show where a delivered instruction landed, and it can hold the first
// request until the demo has queued its instruction.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ModelRequest {
  index: number;
  raw: string;
  body:
    | { messages?: { role: string; content: unknown }[]; tools?: { name: string }[]; stream?: boolean; model?: string }
    | undefined;
}

export interface MockModel {
  url: string;
  requests: ModelRequest[];
  /** Resolves when the first Messages request has arrived (it is held until `release`). */
  firstRequest: Promise<ModelRequest>;
  release(): void;
  close(): Promise<void>;
}

/** Number of tool_result blocks in the conversation: how far a tool script has got. */
export function toolResultCount(body: { messages?: { content: unknown }[] } | undefined): number {
  let n = 0;
  for (const m of body?.messages ?? []) {
    if (Array.isArray(m.content))
      for (const b of m.content)
        if (b && typeof b === 'object' && (b as { type?: unknown }).type === 'tool_result') n += 1;
  }
  return n;
}

export type MessageBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function turnFor(body: ModelRequest['body'], n: number): MessageBlock[] {
  const hasBash = (body?.tools ?? []).some((t) => t.name === 'Bash');
  if (hasBash && toolResultCount(body) === 0) {
    return [
      {
        type: 'tool_use',
        id: `toolu_demo${String(n).padStart(6, '0')}`,
        name: 'Bash',
        input: { command: 'echo hi', description: 'Print hi' },
      },
    ];
  }
  return [{ type: 'text', text: 'Printed hi.' }];
}

function writeEvent(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * One assistant message as the Messages API sends it: one JSON body, or the SSE event sequence when `stream` is set.
 */
export function writeMessage(
  res: ServerResponse,
  m: { id: string; model: string; blocks: MessageBlock[]; stop: string; stream: boolean },
): void {
  const { id, model, blocks, stop } = m;
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!m.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: blocks,
        stop_reason: stop,
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  writeEvent(res, 'message_start', {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  writeEvent(res, 'ping', { type: 'ping' });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      writeEvent(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      writeEvent(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'text_delta', text: b.text },
      });
    } else {
      writeEvent(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
      });
      writeEvent(res, 'content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      });
    }
    writeEvent(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  writeEvent(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  writeEvent(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

function reply(res: ServerResponse, body: ModelRequest['body'], n: number): void {
  const blocks = turnFor(body, n);
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  writeMessage(res, {
    id: `msg_demo${String(n).padStart(6, '0')}`,
    model: body?.model ?? 'claude-demo',
    blocks,
    stop,
    stream: body?.stream === true,
  });
}

export async function startMockModel(opts: { port?: number } = {}): Promise<MockModel> {
  const requests: ModelRequest[] = [];
  let arrive!: (r: ModelRequest) => void;
  const firstRequest = new Promise<ModelRequest>((r) => (arrive = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/messages') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.method === 'HEAD' ? undefined : path === '/v1/messages/count_tokens' ? '{"input_tokens":10}' : '{}');
      return;
    }
    let body: ModelRequest['body'];
    try {
      body = JSON.parse(raw) as ModelRequest['body'];
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"invalid_request_error","message":"body is not JSON"}}');
      return;
    }
    const r: ModelRequest = { index: requests.length, raw, body };
    requests.push(r);
    // Only the main agent's streaming turn is held; side requests (titles, model probes) go through.
    if (!held && body?.stream === true && (body.tools ?? []).some((t) => t.name === 'Bash')) {
      held = true;
      arrive(r);
      await gate;
    }
    reply(res, body, r.index);
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    firstRequest,
    release,
    close: () =>
      new Promise<void>((resolve) => {
        release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
