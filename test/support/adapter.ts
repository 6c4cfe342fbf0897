// Starts a real adapter on an ephemeral loopback port with a log under a fresh temp dir.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, type Observable } from 'rxjs';
import type { AepEvent, SteeringError } from '../../src/protocol/index.js';
import { startAdapter, type AdapterHandle, type AdapterOptions } from '../../src/streams/run.js';
import { fakeSurface, hookBody } from './fake-surface.js';
import { instructCmd } from './session-steps.js';
import { wait } from './until.js';

export const SECRET = 'test-secret-0123456789';

export interface TestAdapter {
  handle: AdapterHandle;
  events: AepEvent[];
  errors: SteeringError[];
  logPath: string;
  post(body: unknown, path?: string): Promise<{ status: number; json: unknown; text: string }>;
  next(pred: (e: AepEvent) => boolean): Promise<AepEvent>;
}

export const tempLog = (): string => join(mkdtempSync(join(tmpdir(), 'aep-steer-')), 'events.jsonl');

export async function adapter(opts: Partial<AdapterOptions> = {}): Promise<TestAdapter> {
  const errors: SteeringError[] = [];
  const logPath = opts.logPath ?? tempLog();
  const handle = await startAdapter({
    surface: fakeSurface(),
    port: 0,
    secret: SECRET,
    logPath,
    instruct: true,
    host: 'test-host',
    fsync: false,
    onError: (e) => errors.push(e),
    ...opts,
  });
  const events: AepEvent[] = [];
  handle.events$.subscribe((e) => events.push(e));
  const base = `http://127.0.0.1:${handle.port}`;
  return {
    handle,
    events,
    errors,
    logPath,
    async post(body, path = `/hook/${SECRET}`) {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, json, text };
    },
    next: (pred) => firstValueFrom((handle.events$ as Observable<AepEvent>).pipe(filter(pred))),
  };
}

/**
 * Steady traffic that fills log segments: `sessions` sessions opened, then `rounds` rounds of one
 * instruction each (`c-<round>-<i>`, text `text <round> <i>`), every third round delivered.
 */
export async function steerRounds(a: TestAdapter, prefix: string, sessions: number, rounds: number): Promise<void> {
  for (let i = 0; i < sessions; i += 1) await a.post(hookBody('SessionStart', `${prefix}-${i}`, { agent_id: 'sub' }));
  for (let r = 0; r < rounds; r += 1) {
    for (let i = 0; i < sessions; i += 1)
      a.handle.command(instructCmd(`c-${r}-${i}`, `text ${r} ${i}`, `${prefix}-${i}`));
    await wait(2);
    if (r % 3 === 2) for (let i = 0; i < sessions; i += 1) await a.post(hookBody('UserPromptSubmit', `${prefix}-${i}`));
  }
}
