// Headless `aep-steer run claude -p` runs as an orchestrator starts them, for the stream-json lane's
// end-to-end suites: the mock's gated slow Bash call, the run's stream-json lines on its stdout,
// and the adapter's events and model requests of its session.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { processTable } from '../../src/adapters/tool-processes.js';
import type { E2e, VendorWorkspace } from './e2e-stack.js';
import { toolResultCount, type RecordedRequest } from './mock-anthropic.js';

type Line = Record<string, unknown>;
/** How Claude Code folds a message into the running turn's next request. */
export const FOLDED = 'The user sent a new message while you were working:';

/** One `aep-steer run claude -p` process: stream-json lines on its stdout. */
export interface StreamRun {
  ws: VendorWorkspace;
  gate: string;
  tag: string;
  child: ChildProcess;
  lines: Line[];
  stderr: () => string;
  done: Promise<number | null>;
  session: string;
}

export function streamRuns(e2e: E2e<'claude-code'>) {
  /** The mock: a prompt carrying `[[GATE:path]]` asks for one Bash call that waits for that file. */
  function script(): void {
    e2e.mock.setScript((body) => {
      if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
      const gate = /\[\[GATE:([^\]]+)\]\]/.exec(JSON.stringify(body.messages?.[0] ?? ''))?.[1];
      if (gate === undefined || toolResultCount(body) > 0)
        return { content: [{ type: 'text', text: `Answered after ${toolResultCount(body)} tool result(s).` }] };
      const cmd = `while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`;
      return {
        content: [{ type: 'tool_use', name: 'Bash', input: { command: cmd, description: 'wait for the gate' } }],
      };
    });
  }

  const all = (run: StreamRun, type: string): AepEvent[] =>
    e2e.stack.events.filter((e) => e.session === run.session && e.type === type);
  const of = (run: StreamRun, type: string, cause?: string) => e2e.stack.find(run.session, type, cause);
  /** The run's main-thread model requests (side requests such as titles offer no tools). */
  const requestsOf = (run: StreamRun): RecordedRequest[] =>
    e2e.requests().filter((r) => r.raw.includes(`${run.tag}:`) && (r.body?.tools ?? []).some((t) => t.name === 'Bash'));
  const accepted = (run: StreamRun, type: string, data: Record<string, unknown>): Promise<AepCommand> =>
    e2e.stack.accepted(run.session, type, data);

  /**
   * Spawns `aep-steer run claude` with the prompt after `-p`, or (`onStdin`) written on its stdin,
   * which then ends; resolves once the run's `system/init` is on its stdout.
   */
  async function spawnRun(tag: string, onStdin = false): Promise<StreamRun> {
    const ws = await e2e.workspace();
    const gate = join(ws.root, `${tag}.go`);
    const prompt = `${tag}: run the slow command [[GATE:${gate}]]`;
    const [node, ...argv] = e2e.aepRun(
      '-p',
      ...(onStdin ? [] : [prompt]),
      '--model',
      'claude-sonnet-4-5',
      '--dangerously-skip-permissions',
    );
    const child = e2e.track(
      spawn(node!, argv, { cwd: ws.project, env: e2e.runEnv(ws), stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    const lines: Line[] = [];
    let partial = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => {
      partial += d.toString();
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      for (const p of parts) if (p.trim() !== '') lines.push(JSON.parse(p) as Line);
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    if (onStdin) child.stdin!.end(`${prompt}\n`);
    const done = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const run: StreamRun = { ws, gate, tag, child, lines, stderr: () => stderr, done, session: '' };
    const init = await e2e.stack.waitFor(
      `${tag}: the run's system/init`,
      () => lines.find((l) => l.type === 'system' && l.subtype === 'init'),
      60_000,
    );
    run.session = String(init.session_id);
    return run;
  }

  /** Starts a run whose one turn's Bash call waits for its gate; resolves once that tool call is on stdout. */
  async function startRun(tag: string): Promise<StreamRun> {
    const run = await spawnRun(tag);
    await e2e.stack.waitFor(`${tag}: the slow tool call`, () =>
      run.lines.find((l) => l.type === 'assistant' && JSON.stringify(l).includes('"tool_use"')),
    );
    await e2e.stack.waitFor(`${tag}: the lane reaches the session`, () =>
      all(run, 'x.claude-code.session.described').find((e) =>
        (e.data?.['lanes'] as string[] | undefined)?.includes('stream-json'),
      ),
    );
    return run;
  }

  /** Ends the caller's input: the run ends once its turns are over, with the CLI's own exit code. */
  async function finish(run: StreamRun, expected = 0): Promise<void> {
    run.child.stdin!.end();
    const code = await run.done;
    assert.is(code, expected, run.stderr());
  }

  /**
   * The mock's command runs, however the Bash tool quotes it: a process names the gate, other than
   * the run itself (whose prompt names it as `[[GATE:…]]`).
   */
  const gateLoopRuns = (run: StreamRun): boolean =>
    (processTable() ?? []).some(
      (p) => p.state !== 'Z' && p.argv.some((a) => a.includes(run.gate) && !a.includes('[[GATE:')),
    );

  return { script, all, of, requestsOf, accepted, spawnRun, startRun, finish, gateLoopRuns };
}
