// The conversation `aep-steer run qwen-code` (run.ts) holds with its session on the `qwen serve`
// daemon: what it keeps (the prompts sent and the turns they run, the permissions asked, the tools
// shown), the terminal it writes to, and the prompts and answers it posts. What each event of the
// session's stream shows and changes is in conversation-events.ts.
import type { ServeClient } from './client.js';
import { permissionAnswer, type ServeOption } from './maps.js';

export const SERVE_RUN_EXIT = { ok: 0, usage: 2, unreachable: 3, refused: 4, ended: 1, interrupted: 130 } as const;

export interface Io {
  in: NodeJS.ReadableStream;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

export const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
export const errorText = (body: unknown): string => {
  const b = rec(body);
  const e = b?.error;
  return typeof e === 'string' ? e : typeof b?.code === 'string' ? b.code : JSON.stringify(body ?? '');
};

export class Conversation {
  /** Prompts this run sent whose turn has not completed (by the daemon's prompt id). */
  readonly mine = new Set<string>();
  /** Turns seen started and not completed, whoever sent them. */
  readonly open = new Set<string>();
  readonly completed = new Set<string>();
  /** Permissions asked and not answered yet, oldest first: the next line typed answers the first. */
  readonly asked: { requestId: string; options: ServeOption[] }[] = [];
  /** Tool calls already shown, by id. */
  readonly tools = new Set<string>();
  /** Texts this run sent, so their echo (which may come before the prompt id) is not shown again. */
  readonly sent = new Set<string>();
  /** Lines typed or posts made whose outcome is not in yet: the conversation ends after them. */
  inflight = 0;
  inputEnded = false;
  /** The model's text stopped mid-line: a line said next starts on a line of its own. */
  midLine = false;
  /** Ends the conversation with an exit code (the first one given holds). */
  finish: (code: number) => void = () => undefined;
  readonly done: Promise<number>;
  private readonly enc: string;

  constructor(
    readonly client: ServeClient,
    readonly session: string,
    private readonly io: Io,
    private readonly say: (line: string) => void,
  ) {
    this.enc = encodeURIComponent(session);
    this.done = new Promise<number>((r) => (this.finish = r));
  }

  /** The model's text, as it streams. */
  write(text: string): void {
    if (text === '') return;
    this.io.out.write(text);
    this.midLine = !text.endsWith('\n');
  }

  /** A line of its own on stderr. */
  line(text: string): void {
    if (this.midLine) this.write('\n');
    this.say(text);
  }

  /** Ends the conversation once input has ended and every turn it sent or saw is done. */
  settle(): void {
    if (this.inputEnded && this.inflight === 0 && this.mine.size === 0 && this.open.size === 0)
      this.finish(SERVE_RUN_EXIT.ok);
  }

  async send(text: string): Promise<void> {
    this.sent.add(text);
    this.inflight += 1;
    const r = await this.client
      .request('POST', `/session/${this.enc}/prompt`, { prompt: [{ type: 'text', text }] })
      .catch((err: unknown) => ({ status: 0, body: err instanceof Error ? err.message : String(err) }));
    const id = rec(r.body)?.promptId;
    this.inflight -= 1;
    if (r.status !== 202 || typeof id !== 'string')
      this.line(
        `run: the daemon did not take the prompt (HTTP ${r.status}: ${errorText(r.body)}); type it again once the running turn ends`,
      );
    else if (!this.completed.has(id)) this.mine.add(id);
    this.settle();
  }

  /** Answers the oldest permission asked with a line typed (y, yes or allow; anything else denies). */
  async answer(text: string): Promise<void> {
    const a = this.asked.shift()!;
    this.inflight += 1;
    const yes = /^(y|yes|allow)$/i.test(text);
    const r = await this.client
      .request(
        'POST',
        `/session/${this.enc}/permission/${encodeURIComponent(a.requestId)}`,
        permissionAnswer(a.options, yes),
      )
      .catch((err: unknown) => ({ status: 0, body: err instanceof Error ? err.message : String(err) }));
    this.inflight -= 1;
    this.line(
      r.status === 200
        ? `run: ${yes ? 'allowed' : 'denied'}`
        : `run: the answer was not taken (HTTP ${r.status}: it was answered elsewhere, or the turn ended)`,
    );
    this.settle();
  }

  /** Asks the daemon to stop the running turn. */
  cancel(): void {
    void this.client.request('POST', `/session/${this.enc}/cancel`).catch(() => undefined);
  }
}
