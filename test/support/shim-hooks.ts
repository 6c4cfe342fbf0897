// For vendors that cannot run here: runs an installed hook command the way the vendor does (JSON
// on stdin, reply on stdout), so the real shim posts to a real adapter, and follows what that
// adapter recorded.
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import type { TestAdapter } from './adapter.js';

export type Input = Record<string, unknown>;

export const SENDER = { agent: 'test-operator' };

/** Runs `cmd` through /bin/sh with `input` as JSON on stdin. */
export function runHookCommand(
  cmd: string,
  input: Input,
  stderr: 'pipe' | 'ignore' = 'pipe',
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['pipe', 'pipe', stderr] });
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
    child.stdin!.end(JSON.stringify(input));
  });
}

/** Polls the adapter's recorded stream (an event may land before a subscription would start). */
export async function seenOn(
  a: TestAdapter,
  what: string,
  pred: (e: AepEvent) => boolean,
  limitMs = 20_000,
): Promise<AepEvent> {
  const until = Date.now() + limitMs;
  for (;;) {
    const e = a.events.find(pred);
    if (e !== undefined) return e;
    if (Date.now() > until)
      throw new Error(
        `never saw ${what}: ${a.events.map((x) => x.type).join(', ')}; errors: ${a.errors.map((x) => x.message).join('; ')}`,
      );
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends `x.<token>.control.instruct` to the adapter and checks it was accepted. */
export async function instructOn(a: TestAdapter, token: string, session: string, text: string): Promise<AepCommand> {
  const cmd = command(SENDER, session, { type: `x.${token}.control.instruct`, data: { text } });
  a.handle.command(cmd);
  const ack = await seenOn(a, 'the ack', (e) => e.cause === cmd.id && e.type.startsWith('control.'));
  assert.is(ack.type, 'control.accepted', JSON.stringify(ack.data));
  return cmd;
}
