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
import { Conversation, errorText, rec, SERVE_RUN_EXIT, type Io } from './conversation.js';
import { showEvent } from './conversation-events.js';
import { followSession } from './sse.js';

const MODES = ['default', 'auto-edit', 'yolo', 'plan', 'auto'];

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
  const c = new Conversation(client, session, io, say);
  let interrupts = 0;
  let sub: Subscription | undefined;

  const onInt = () => {
    interrupts += 1;
    if (c.open.size === 0 || interrupts > 1) {
      c.finish(SERVE_RUN_EXIT.interrupted);
      return;
    }
    c.line('run: stopping the running turn (Ctrl-C again leaves)');
    c.cancel();
  };
  process.on('SIGINT', onInt);

  // The stream is open before the first prompt goes, so none of its frames is missed.
  let opened: () => void = () => undefined;
  const streaming = new Promise<void>((r) => (opened = r));
  sub = followSession(client, session, { onOpen: () => opened() }).subscribe({
    next: (e) => showEvent(c, e),
    complete: () => c.finish(SERVE_RUN_EXIT.ended),
  });
  say(
    `run: qwen-code session ${session} on ${client.url}; each line is a prompt, end of input (Ctrl-D) leaves once its turns end\n` +
      `run: steer it from another terminal: aep-steer instruct --session ${session} --delivery steer "…"`,
  );
  const rl = createInterface({ input: io.in, terminal: false });
  // Lines typed before the stream is open wait for it (and for the first prompt) in order.
  let ready: Promise<unknown> = streaming.then(() => (first === '' ? undefined : c.send(first)));
  rl.on('line', (text) => {
    const t = text.trim();
    if (t === '') return;
    c.inflight += 1;
    ready = ready.then(async () => {
      c.inflight -= 1;
      await (c.asked.length > 0 ? c.answer(t) : c.send(t));
    });
  });
  rl.on('close', () => {
    void ready.then(() => {
      c.inputEnded = true;
      c.settle();
    });
  });
  return c.done.then((code) => {
    process.off('SIGINT', onInt);
    rl.close();
    sub?.unsubscribe();
    if (c.midLine) io.out.write('\n');
    say(`run: left session ${session}; it stays on the daemon (\`aep-steer sessions\` lists it)`);
    return code;
  });
}
