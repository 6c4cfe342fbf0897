// A loopback stand-in for the model API the vendor CLIs talk to: OpenAI Responses for Codex
// (vendor-clis-observed.md §5.2) and Chat Completions for Qwen Code and Cline (§5.3) and the
// OpenHands stand-in agent server. It records every
// request so a test can search the bodies for hook context, and decides each reply from the
// request alone (stateless): while fewer tool results follow the last real user prompt than the
// prompt asks for, it answers with one shell tool call; otherwise with text, which ends the turn.
//
// The prompt drives the script: a real user prompt carries `[[TURN]]` (Qwen re-fires
// UserPromptSubmit with an empty prompt after each tool batch, §5.3 caveat, so only marked
// prompts reset the count), `[[TOOLS:n]]` asks for n shell calls (default 1), and `[[SPAWN]]`
// makes the first call a Codex subagent (`spawn_agent`) before the shell calls,
// `[[WAITFILE:/path]]` makes each shell call wait until the test creates that file (with
// `[[YIELDFIRST:ms]]` the first call's command goes on in the background after `ms`), and
// `[[ESCALATE]]` makes each Codex shell call ask to run outside the sandbox (so Codex asks for
// approval and fires PermissionRequest), and `[[PATCH:name]]` makes it an `apply_patch` adding
// that file (Codex runs it as a file change, asking first under a read-only sandbox).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestHolds, type Hold as RequestHold } from './request-holds.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** The raw body text, for searching markers wherever the vendor placed them. */
  text: string;
}

type Hold = RequestHold<RecordedRequest>;

export interface MockOpenAi {
  /** `http://127.0.0.1:<port>/v1`: what a CLI takes as its base URL. */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  /** Model requests (Responses or Chat Completions) only, in arrival order. */
  modelRequests(): RecordedRequest[];
  /** Holds the next model request that matches, so a test can queue steering before its reply. */
  hold(match?: (r: RecordedRequest) => boolean): Hold;
  close(): Promise<void>;
}

const TURN = '[[TURN]]';

function toolCountOf(prompt: string): number {
  const m = /\[\[TOOLS:(\d+)\]\]/.exec(prompt);
  return m ? Number(m[1]) : 1;
}

/** `[[WAITFILE:/path]]`: the shell call waits until the test creates that file. */
function waitFileOf(prompt: string): string | undefined {
  const m = /\[\[WAITFILE:([^\]']+)\]\]/.exec(prompt);
  return m ? m[1] : undefined;
}

/**
 * `[[YIELDFIRST:ms]]`: the turn's first shell call asks Codex to give its output back after `ms`
 * (`yield_time_ms`); a command still running then goes on in the background while the turn does.
 */
function yieldFirstOf(prompt: string): number | undefined {
  const m = /\[\[YIELDFIRST:(\d+)\]\]/.exec(prompt);
  return m ? Number(m[1]) : undefined;
}

/** `[[PATCH:name]]`: the shell call is an `apply_patch` adding that file (Codex runs it as a file change). */
function patchFileOf(prompt: string): string | undefined {
  const m = /\[\[PATCH:([^\]'\s]+)\]\]/.exec(prompt);
  return m ? m[1] : undefined;
}

/** The heredoc form of `apply_patch` Codex 0.171.0 intercepts in `exec_command` and runs as a patch. */
const applyPatchCommand = (file: string, line: string): string =>
  `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch\nEOF\n`;

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '',
      )
      .join('');
  }
  return '';
};

// ---- Responses (Codex) ----------------------------------------------------------------------

interface ResponsesItem {
  type?: string;
  role?: string;
  content?: unknown;
  name?: string;
}

function responsesStep(body: { input?: ResponsesItem[] }): {
  prompt: string;
  toolResults: number;
  spawned: boolean;
  calls: number;
} {
  const input = Array.isArray(body.input) ? body.input : [];
  let last = -1;
  for (let i = 0; i < input.length; i += 1) {
    const it = input[i]!;
    if (it.type === 'message' && it.role === 'user' && textOf(it.content).includes(TURN)) last = i;
  }
  const prompt = last >= 0 ? textOf(input[last]!.content) : '';
  const after = input.slice(last + 1);
  const toolResults = after.filter((it) => typeof it.type === 'string' && it.type.endsWith('_call_output')).length;
  const spawned = after.some((it) => it.type === 'function_call' && it.name === 'spawn_agent');
  const calls = after.filter((it) => it.type === 'function_call').length;
  return { prompt, toolResults, spawned, calls };
}

function sse(res: ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
  for (const e of events) {
    if (e.event !== undefined) res.write(`event: ${e.event}\n`);
    res.write(`data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
  }
  res.end();
}

function answerResponses(body: Record<string, unknown>, res: ServerResponse, counter: () => number): void {
  const n = counter();
  const model = typeof body.model === 'string' ? body.model : 'mock-model';
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  const step = responsesStep(body as { input?: ResponsesItem[] });
  const wanted = toolCountOf(step.prompt);
  let item: Record<string, unknown>;
  if (hasTools && step.prompt.includes('[[SPAWN]]') && !step.spawned && step.calls === 0) {
    item = {
      type: 'function_call',
      id: `fc_mock_${n}`,
      call_id: `call_mock_${n}`,
      namespace: 'multi_agent_v1',
      name: 'spawn_agent',
      arguments: JSON.stringify({ message: `${TURN} subagent task: run one shell command` }),
      status: 'completed',
    };
  } else if (hasTools && step.toolResults - (step.spawned ? 1 : 0) < wanted) {
    const wait = waitFileOf(step.prompt);
    const patch = patchFileOf(step.prompt);
    const cmd =
      patch !== undefined
        ? applyPatchCommand(patch, `PATCHED_${n}`)
        : wait === undefined
          ? `echo TOOL_RAN_${n}`
          : `while [ ! -e '${wait}' ]; do sleep 0.05; done; echo TOOL_RAN_${n}`;
    item = {
      type: 'function_call',
      id: `fc_mock_${n}`,
      call_id: `call_mock_${n}`,
      name: 'exec_command',
      arguments: JSON.stringify({
        cmd,
        yield_time_ms:
          step.toolResults === 0 && yieldFirstOf(step.prompt) !== undefined
            ? yieldFirstOf(step.prompt)
            : wait === undefined
              ? 2000
              : 30_000,
        ...(step.prompt.includes('[[ESCALATE]]')
          ? { sandbox_permissions: 'require_escalated', justification: 'the test asks for approval' }
          : {}),
      }),
      status: 'completed',
    };
  } else {
    item = {
      type: 'message',
      id: `msg_mock_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: `MOCK_DONE ${n}`, annotations: [] }],
    };
  }
  const id = `resp_mock_${n}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, object: 'response', created_at: created, model };
  let seq = 0;
  const ev = (type: string, payload: Record<string, unknown>) => ({
    event: type,
    data: { type, sequence_number: seq++, ...payload },
  });
  const events = [ev('response.created', { response: { ...base, status: 'in_progress', output: [] } })];
  events.push(
    ev('response.output_item.added', {
      output_index: 0,
      item: { ...item, status: 'in_progress', ...(item.type === 'message' ? { content: [] } : {}) },
    }),
  );
  if (item.type === 'message') {
    const text = (item.content as { text: string }[])[0]!.text;
    events.push(ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text }));
  }
  events.push(ev('response.output_item.done', { output_index: 0, item }));
  events.push(
    ev('response.completed', {
      response: {
        ...base,
        status: 'completed',
        output: [item],
        usage: {
          input_tokens: 100,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 10,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 110,
        },
      },
    }),
  );
  sse(res, events);
}

// ---- Chat Completions (Qwen Code, Cline) -----------------------------------------------------------

interface ChatMessage {
  role?: string;
  content?: unknown;
}

function answerChat(body: Record<string, unknown>, res: ServerResponse, counter: () => number): void {
  const n = counter();
  const model = typeof body.model === 'string' ? body.model : 'mock-model';
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ChatMessage[];
  const tools = (Array.isArray(body.tools) ? body.tools : []) as { function?: { name?: string } }[];
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user' && textOf(m.content).includes(TURN)) last = i;
  });
  const prompt = last >= 0 ? textOf(messages[last]!.content) : '';
  const toolResults = messages.slice(last + 1).filter((m) => m.role === 'tool').length;
  // Qwen Code's shell tool, Cline's `run_commands {commands:[…]}` (vendor-clis-observed §5), the
  // OpenHands stand-in's (openhands-server.ts), or the `bash` of Copilot CLI and opencode
  // (copilot-opencode-observed §1).
  const shell = tools
    .map((t) => t.function?.name)
    .find((n) => n === 'run_shell_command' || n === 'execute_bash' || n === 'run_commands' || n === 'bash');
  const id = `chatcmpl_mock_${n}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
    data: {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    },
  });
  const usage = { usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } };
  const callTool = shell !== undefined && last >= 0 && toolResults < toolCountOf(prompt);
  const wait = waitFileOf(prompt);
  const cmd =
    wait === undefined ? `echo TOOL_RAN_${n}` : `while [ ! -e '${wait}' ]; do sleep 0.05; done; echo TOOL_RAN_${n}`;
  const args =
    shell === 'run_commands'
      ? JSON.stringify({ commands: [cmd] })
      : JSON.stringify({ command: cmd, description: 'shell command', is_background: false });
  if (body.stream !== true) {
    const message = callTool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_mock_${n}`, type: 'function', function: { name: shell, arguments: args } }],
        }
      : { role: 'assistant', content: `MOCK_DONE ${n}` };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: callTool ? 'tool_calls' : 'stop' }],
        ...usage,
      }),
    );
    return;
  }
  const events = [chunk({ role: 'assistant', content: '' }, null)];
  if (callTool) {
    events.push(
      chunk(
        {
          tool_calls: [{ index: 0, id: `call_mock_${n}`, type: 'function', function: { name: shell, arguments: '' } }],
        },
        null,
      ),
    );
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }, null));
    events.push(chunk({}, 'tool_calls', usage));
  } else {
    events.push(chunk({ content: `MOCK_DONE ${n}` }, null));
    events.push(chunk({}, 'stop', usage));
  }
  sse(res, [...events, { data: '[DONE]' }]);
}

// ---- server ---------------------------------------------------------------------------------

/** The whole request body as UTF-8 (the stand-in servers read small JSON bodies). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const REDACTED_HEADERS = new Set(['authorization', 'x-api-key', 'api-key']);

export async function startMockOpenAi(): Promise<MockOpenAi> {
  const requests: RecordedRequest[] = [];
  let n = 0;
  const counter = () => {
    n += 1;
    return n;
  };
  const holds = requestHolds<RecordedRequest>();
  const isModel = (path: string) => path.endsWith('/responses') || path.endsWith('/chat/completions');
  const server: Server = createServer((req, res) => {
    readBody(req)
      .then(async (text) => {
        let body: unknown;
        try {
          body = text.length > 0 ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers))
          headers[k] = REDACTED_HEADERS.has(k) ? '[redacted]' : String(v);
        const path = (req.url ?? '/').split('?')[0]!;
        const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers, body, text };
        requests.push(recorded);
        if (isModel(path)) await holds.pass(recorded);
        const obj = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
        if (req.method === 'POST' && path.endsWith('/responses')) return answerResponses(obj, res, counter);
        if (req.method === 'POST' && path.endsWith('/chat/completions')) return answerChat(obj, res, counter);
        if (req.method === 'GET' && path.endsWith('/models')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              object: 'list',
              data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }],
            }),
          );
          return;
        }
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    modelRequests: () => requests.filter((r) => isModel(r.path)),
    hold: holds.hold,
    close: () =>
      new Promise<void>((resolve) => {
        holds.releaseAll();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
