// Shared pieces of the consumer-command tests: a real relay and Claude Code adapter in-process
// (port 0), a scripted session made live on the relay, and a text sink standing in for stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AepEvent } from '../../src/protocol/index.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { scriptedSession, type ScriptedSession } from '../../src/demo/scripted-session.js';
import { recordEvents, startStack, type Stack, type StackOptions } from '../../src/demo/stack.js';

export interface TestStack extends Stack {
  dir: string;
  /** A consumer connection for the test's own observations. */
  observer: RelayConsumer;
  /** Everything the observer saw, in arrival order. */
  seen: AepEvent[];
  /** Resolves with the first observed event matching `test` (past or future). */
  waitFor(test: (e: AepEvent) => boolean): Promise<AepEvent>;
  /** Posts a scripted session's opening hooks and waits until the relay routes to it. */
  openSession(opts?: Parameters<typeof scriptedSession>[0]): Promise<ScriptedSession>;
  stop(): Promise<void>;
}

export async function startTestStack(opts: Partial<StackOptions> = {}): Promise<TestStack> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-cli-'));
  const stack = await startStack({ dir, ...opts });
  const observer = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.token, agent: 'test-observer' });
  const { seen, waitFor } = await recordEvents(observer);
  return {
    ...stack,
    dir,
    observer,
    seen,
    waitFor,
    async openSession(o) {
      const s = scriptedSession(o);
      for (const h of s.opening) await stack.postHook(h);
      // An event of the session on the relay means the adapter's claim is in place (aep-wire §4.4).
      await waitFor((e) => e.session === s.session && e.type === 'run.started');
      return s;
    },
    async stop() {
      await observer.close();
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function sink(): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(c: Buffer, _e, cb) {
      text += c.toString();
      cb();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = false;
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

/** A Claude Code PermissionRequest for the scripted session's tool (a held loop, D14). */
export function permissionRequest(s: ScriptedSession): Record<string, unknown> {
  const pre = s.toolCall[0]!;
  return {
    session_id: s.session,
    transcript_path: pre['transcript_path'],
    cwd: s.cwd,
    prompt_id: pre['prompt_id'],
    permission_mode: 'default',
    effort: { level: 'medium' },
    hook_event_name: 'PermissionRequest',
    tool_name: 'Bash',
    tool_input: { command: 'touch new-file.txt', description: 'Create a file' },
    permission_suggestions: [],
  };
}

/** Opens a held PermissionRequest; resolves with the request id and the pending hook reply. */
export async function heldPermission(
  stack: TestStack,
  s: ScriptedSession,
): Promise<{ request: string; reply: Promise<{ status: number; body: unknown }> }> {
  const reply = stack.postHook(permissionRequest(s));
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  return { request: requested.id, reply };
}
