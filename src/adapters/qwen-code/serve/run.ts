// `aep-steer run qwen-code [--approval-mode M] [prompt…]`: a session of its own on the `qwen
// serve` daemon the adapter's serve lane is attached to (what `open` answered: its URL and token
// file), driven from the terminal instead of the daemon's web shell. Each line typed is a prompt
// (the daemon queues one sent while a turn runs); the model's text goes to stdout, tool calls and
// what reached the session from elsewhere (a steer, a queued instruction) to stderr. While the
// daemon asks a permission, the next line answers it (y or n). Ctrl-C stops the running turn;
// end of input leaves once the turns sent have finished. The session stays on the daemon.
import { createInterface } from 'node:readline';
import type { Subscription } from 'rxjs';
import { SteeringError } from '../../../protocol/errors.js';
import { serveClient, type ServeClient } from './client.js';
import { optionsOf, permissionAnswer, type ServeEvent, type ServeOption } from './maps.js';
import { followSession } from './sse.js';

export const SERVE_RUN_EXIT = { ok: 0, usage: 2, unreachable: 3, refused: 4, ended: 1, interrupted: 130 } as const;
const MODES = ['default', 'auto-edit', 'yolo', 'plan', 'auto'];

interface Io {
  in: NodeJS.ReadableStream;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/** `--approval-mode M` and the prompt words; a usage message for anything else. */
export function parseServeRunArgs(args: readonly string[]): { mode?: string; prompt: string } | { usage: string } {
  let mode: string | undefined;
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      words.push(...args.slice(i + 1));
      break;
    }
    if (a === '--approval-mode' || a.startsWith('--approval-mode=')) {
      mode = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      if (mode === undefined || !MODES.includes(mode))
        return { usage: `--approval-mode takes ${MODES.join(', ')}, got "${mode ?? ''}"` };
      continue;
    }
    // An option before the prompt is a mistake; a word like `-v` inside the prompt is text.
    if (a.startsWith('-') && a !== '-' && words.length === 0) return { usage: `unknown option ${a}` };
    words.push(a);
  }
  return { ...(mode === undefined ? {} : { mode }), prompt: words.join(' ').trim() };
}

const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const errorText = (body: unknown): string => {
  const b = rec(body);
  const e = b?.error;
  return typeof e === 'string' ? e : typeof b?.code === 'string' ? b.code : JSON.stringify(body ?? '');
};

export async function runServeSession(
  _env: NodeJS.ProcessEnv,
  opened: Record<string, unknown>,
  args: readonly string[],
  cwd: string,
  io: Io,
): Promise<number> {
  const say = (line: string) => io.err.write(`${line}\n`);
  const parsed = parseServeRunArgs(args);
  if ('usage' in parsed) {
    say(`run: ${parsed.usage}; \`aep-steer run qwen-code\` takes [--approval-mode ${MODES.join('|')}] [prompt…]`);
    return SERVE_RUN_EXIT.usage;
  }
  const url = String(opened.url);
  const tokenFile = typeof opened.tokenFile === 'string' ? opened.tokenFile : undefined;
  const client = serveClient({ url, ...(tokenFile === undefined ? {} : { tokenFile }) });
  const why = (err: unknown): string => (err instanceof SteeringError ? err.message : String(err));
  let session: string;
  try {
    const r = await client.request('POST', '/session', { cwd });
    const id = rec(r.body)?.sessionId;
    if (r.status !== 200 || typeof id !== 'string') {
      const text = errorText(r.body);
      say(
        text.includes('workspace_mismatch')
          ? `run: the qwen serve daemon at ${url} serves another folder than ${cwd} (workspace_mismatch): run this from the folder \`aep-steer up qwen-code --serve\` was started in, or start it again from here (\`aep-steer down qwen-code\`, then \`aep-steer up qwen-code --serve --instruct\`)`
          : `run: the qwen serve daemon at ${url} did not open a session (HTTP ${r.status}: ${text}); its log is in ~/.aep-steering/logs/qwen-serve.log`,
      );
      return SERVE_RUN_EXIT.refused;
    }
    session = id;
  } catch (err) {
    say(
      `run: ${why(err)}; \`aep-steer status\` shows whether the daemon of \`aep-steer up qwen-code --serve\` runs, and \`aep-steer up qwen-code --serve --instruct\` starts it`,
    );
    return SERVE_RUN_EXIT.unreachable;
  }
  if (parsed.mode !== undefined) {
    const r = await client
      .request('POST', `/session/${encodeURIComponent(session)}/approval-mode`, { mode: parsed.mode })
      .catch((err: unknown) => ({ status: 0, body: why(err) }));
    if (r.status !== 200)
      say(`run: warning: the daemon kept its approval mode (HTTP ${r.status}: ${errorText(r.body)})`);
  }
  return converse(client, session, parsed.prompt, io, say);
}

/** The conversation: prompts in, the session's stream out, until input ends and its turns are done. */
function converse(
  client: ServeClient,
  session: string,
  first: string,
  io: Io,
  say: (line: string) => void,
): Promise<number> {
  const enc = encodeURIComponent(session);
  /** Prompts this run sent whose turn has not completed (by the daemon's prompt id). */
  const mine = new Set<string>();
  /** Turns seen started and not completed, whoever sent them. */
  const open = new Set<string>();
  const completed = new Set<string>();
  const asked: { requestId: string; options: ServeOption[] }[] = [];
  const tools = new Set<string>();
  /** Texts this run sent, so their echo (which may come before the prompt id) is not shown again. */
  const sent = new Set<string>();
  let inflight = 0;
  let inputEnded = false;
  let midLine = false;
  let interrupts = 0;
  let sub: Subscription | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((r) => (finish = r));

  const write = (text: string) => {
    if (text === '') return;
    io.out.write(text);
    midLine = !text.endsWith('\n');
  };
  const line = (text: string) => {
    if (midLine) write('\n');
    say(text);
  };
  const settle = () => {
    if (inputEnded && inflight === 0 && mine.size === 0 && open.size === 0) finish(SERVE_RUN_EXIT.ok);
  };

  async function send(text: string): Promise<void> {
    sent.add(text);
    inflight += 1;
    const r = await client
      .request('POST', `/session/${enc}/prompt`, { prompt: [{ type: 'text', text }] })
      .catch((err: unknown) => ({ status: 0, body: err instanceof Error ? err.message : String(err) }));
    const id = rec(r.body)?.promptId;
    inflight -= 1;
    if (r.status !== 202 || typeof id !== 'string')
      line(
        `run: the daemon did not take the prompt (HTTP ${r.status}: ${errorText(r.body)}); type it again once the running turn ends`,
      );
    else if (!completed.has(id)) mine.add(id);
    settle();
  }

  async function answer(text: string): Promise<void> {
    const a = asked.shift()!;
    inflight += 1;
    const yes = /^(y|yes|allow)$/i.test(text);
    const r = await client
      .request(
        'POST',
        `/session/${enc}/permission/${encodeURIComponent(a.requestId)}`,
        permissionAnswer(a.options, yes),
      )
      .catch((err: unknown) => ({ status: 0, body: err instanceof Error ? err.message : String(err) }));
    inflight -= 1;
    line(
      r.status === 200
        ? `run: ${yes ? 'allowed' : 'denied'}`
        : `run: the answer was not taken (HTTP ${r.status}: it was answered elsewhere, or the turn ended)`,
    );
    settle();
  }

  function onEvent(e: ServeEvent): void {
    const prompt = typeof e.data?.promptId === 'string' ? e.data.promptId : e.promptId;
    // Observed on 0.24.4: a turn opens with its prompt's echo or `pending_prompt_started`.
    if (
      prompt !== undefined &&
      !completed.has(prompt) &&
      (e.type === 'session_update' || e.type === 'pending_prompt_started')
    )
      open.add(prompt);
    const update = rec(e.data?.update);
    switch (e.type) {
      case 'session_update': {
        const kind = update?.sessionUpdate;
        const content = rec(update?.content);
        if (kind === 'agent_message_chunk' && typeof content?.text === 'string') write(content.text);
        // A prompt this run did not send (a queued instruction, another client) is shown as one.
        else if (kind === 'user_message_chunk' && typeof content?.text === 'string' && !sent.has(content.text))
          line(`› ${content.text}`);
        else if (kind === 'tool_call_update' && update?.status === 'in_progress') {
          const id = String(update.toolCallId ?? '');
          if (!tools.has(id)) {
            tools.add(id);
            line(`  ⚙ ${String(update.title ?? 'a tool')}`);
          }
        }
        return;
      }
      case 'mid_turn_message_injected': {
        const ids = Array.isArray(e.data?.messageIds) ? e.data.messageIds.length : 0;
        line(`  ↳ ${ids === 1 ? 'a message' : `${ids} messages`} reached the running turn (a steer)`);
        return;
      }
      case 'permission_request': {
        const requestId = e.data?.requestId;
        if (typeof requestId !== 'string') return;
        asked.push({ requestId, options: optionsOf(e) });
        const call = rec(e.data?.toolCall);
        line(
          `run: permission asked: ${String(call?.title ?? 'a tool call')}; type y to allow or n to deny (or answer it with \`aep-steer respond\`)`,
        );
        return;
      }
      case 'permission_resolved': {
        const i = asked.findIndex((a) => a.requestId === e.data?.requestId);
        if (i === -1) return;
        asked.splice(i, 1);
        line('run: the permission was answered elsewhere');
        return;
      }
      case 'turn_complete': {
        if (prompt === undefined) return;
        completed.add(prompt);
        open.delete(prompt);
        mine.delete(prompt);
        if (midLine) write('\n');
        if (e.data?.stopReason === 'cancelled') line('run: the turn was stopped');
        settle();
        return;
      }
      case 'session_died':
        line('run: the daemon ended this session; `aep-steer run qwen-code` opens a new one');
        finish(SERVE_RUN_EXIT.ended);
        return;
    }
  }

  const onInt = () => {
    interrupts += 1;
    if (open.size === 0 || interrupts > 1) {
      finish(SERVE_RUN_EXIT.interrupted);
      return;
    }
    line('run: stopping the running turn (Ctrl-C again leaves)');
    void client.request('POST', `/session/${enc}/cancel`).catch(() => undefined);
  };
  process.on('SIGINT', onInt);

  // The stream is open before the first prompt goes, so none of its frames is missed.
  let opened: () => void = () => undefined;
  const streaming = new Promise<void>((r) => (opened = r));
  sub = followSession(client, session, { onOpen: () => opened() }).subscribe({
    next: onEvent,
    complete: () => finish(SERVE_RUN_EXIT.ended),
  });
  say(
    `run: qwen-code session ${session} on ${client.url}; each line is a prompt, end of input (Ctrl-D) leaves once its turns end\n` +
      `run: steer it from another terminal: aep-steer instruct --session ${session} --delivery steer "…"`,
  );
  const rl = createInterface({ input: io.in, terminal: false });
  // Lines typed before the stream is open wait for it (and for the first prompt) in order.
  let ready: Promise<unknown> = streaming.then(() => (first === '' ? undefined : send(first)));
  rl.on('line', (text) => {
    const t = text.trim();
    if (t === '') return;
    inflight += 1;
    ready = ready.then(async () => {
      inflight -= 1;
      await (asked.length > 0 ? answer(t) : send(t));
    });
  });
  rl.on('close', () => {
    void ready.then(() => {
      inputEnded = true;
      settle();
    });
  });
  return done.then((code) => {
    process.off('SIGINT', onInt);
    rl.close();
    sub?.unsubscribe();
    if (midLine) io.out.write('\n');
    say(`run: left session ${session}; it stays on the daemon (\`aep-steer sessions\` lists it)`);
    return code;
  });
}
