// Real clients for relay tests: HTTP POST, an SSE reader, and a raw WebSocket peer that keeps
// every frame it receives so a test can wait for the one it expects.
import { request } from 'node:http';
import WebSocket from 'ws';
import { SessionEmitter } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';

/** Upper bound on any single wait, so a broken relay fails a test instead of hanging it. */
export const WAIT_MS = 5000;

export async function post(
  base: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

export const ndjson = (events: readonly AepEvent[]): string => `${events.map((e) => JSON.stringify(e)).join('\n')}\n`;

export interface SseMessage {
  event?: string;
  data?: string;
  id?: string;
  comments: string[];
}

/** An SSE reader over node:http: every message and comment, in order. */
export class SseClient {
  readonly messages: SseMessage[] = [];
  status = 0;
  ended = false;
  private buffer = '';
  private req: ReturnType<typeof request> | undefined;
  private readonly waiters = new Set<() => void>();

  static open(base: string, query: Record<string, string>, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    const qs = new URLSearchParams(query).toString();
    return new Promise((resolve, reject) => {
      c.req = request(
        `${base}/stream${qs ? `?${qs}` : ''}`,
        { headers: { accept: 'text/event-stream', ...headers } },
        (res) => {
          c.status = res.statusCode ?? 0;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => c.feed(chunk));
          res.on('end', () => {
            c.ended = true;
            c.wake();
          });
          res.on('error', () => {});
          resolve(c);
        },
      );
      c.req.on('error', reject);
      c.req.end();
    });
  }

  /** Parsed events delivered so far. */
  get events(): AepEvent[] {
    return this.messages.filter((m) => m.data !== undefined).map((m) => JSON.parse(m.data!) as AepEvent);
  }

  get comments(): string[] {
    return this.messages.flatMap((m) => m.comments);
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    for (let i = this.buffer.indexOf('\n\n'); i >= 0; i = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, i);
      this.buffer = this.buffer.slice(i + 2);
      const m: SseMessage = { comments: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) m.comments.push(line.slice(1).trim());
        else if (line.startsWith('event: ')) m.event = line.slice(7);
        else if (line.startsWith('data: ')) m.data = line.slice(6);
        else if (line.startsWith('id: ')) m.id = line.slice(4);
      }
      this.messages.push(m);
    }
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters) w();
  }

  /** Resolves once `pred` holds over what has arrived (or the stream ended). */
  until(pred: (c: SseClient) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pred(this) || this.ended) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`SSE: condition not met; got ${JSON.stringify(this.messages).slice(0, 600)}`));
      }, WAIT_MS);
      this.waiters.add(check);
      check();
    });
  }

  /** Waits for the stream to end (live=0). */
  done(): Promise<void> {
    return this.until((c) => c.ended);
  }

  close(): void {
    this.req?.destroy();
  }
}

/** A raw WS peer: frames kept as text and parsed, waits by predicate. */
export class WsPeer {
  readonly frames: { text: string; json: any }[] = [];
  closeCode: number | undefined;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const text = data.toString();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      this.frames.push({ text, json });
      this.wake();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      this.wake();
    });
    ws.on('error', () => {});
  }

  static open(url: string, token?: string): Promise<WsPeer> {
    const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new WsPeer(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** Opens and completes the hello exchange. */
  static async greet(url: string, hello: Record<string, unknown>, token?: string): Promise<WsPeer> {
    const p = await WsPeer.open(url, token);
    p.send({ type: 'hello', versions: ['0.1'], ...hello });
    await p.next((f) => f.type === 'hello');
    return p;
  }

  /** A command target: an emitter for `agent` that accepts the command types `accepts`. */
  static target(url: string, agent: string, accepts: readonly string[], token?: string): Promise<WsPeer> {
    return WsPeer.greet(
      url,
      { role: 'emitter', identity: { agent }, capabilities: { control: { accepts: [...accepts] } } },
      token,
    );
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  private wake(): void {
    for (const w of this.waiters) w();
  }

  /** The first frame (from `start`) matching `pred`. */
  next(pred: (f: any, text: string) => boolean, start = 0): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const hit = this.frames.slice(start).find((f) => f.json !== undefined && pred(f.json, f.text));
        if (hit) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve(hit.json);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`WS: no matching frame; got ${JSON.stringify(this.frames.map((f) => f.json)).slice(0, 800)}`));
      }, WAIT_MS);
      this.waiters.add(check);
      check();
    });
  }

  closed(): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.closeCode !== undefined) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve(this.closeCode);
        }
      };
      const timer = setTimeout(() => reject(new Error('WS: still open')), WAIT_MS);
      this.waiters.add(check);
      check();
    });
  }

  events(): AepEvent[] {
    return this.frames
      .filter((f) => typeof f.json?.type === 'string' && f.json.type.includes('.'))
      .map((f) => f.json as AepEvent);
  }

  close(): void {
    this.ws.close();
  }
}

/** A session emitter with a fixed host so sources are predictable. */
export const emitterFor = (session: string, agent = 'test-agent', epoch = 0): SessionEmitter =>
  new SessionEmitter({ agent, session, epoch, host: 'test-host' });

let counter = 0;
/** A session name unique within the process. */
export const freshSession = (prefix = 's'): string => `${prefix}-${process.pid}-${++counter}`;
