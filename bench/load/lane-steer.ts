// Load generator for the native-lane bench: one instruction at a time, each timed by the adapter
// from its injection to its `instruction.delivered` (bench/servers/adapter.ts `timed`).
// `lane: "serve"`: a `steer` to a session the stand-in daemon hosts, in its running turn; the
// lane carries it and the daemon's receipt delivers it. `lane: "hook"`: a `moment` instruction,
// then at once an eligible hook (PostToolUse, as Qwen Code 0.24.4 posts it) whose reply carries
// it. Warm-up instructions first (a steer is refused until the lane has attached to the session
// and seen its turn: those are retried). Answers `{ ms: number[] }`.
import { answer, argOf } from '../lib/proc.js';
import { agent, post } from './http.js';

interface Arg {
  lane: 'serve' | 'hook';
  hookUrl: string;
  injectUrl: string;
  settledUrl: string;
  session: string;
  n: number;
  warmup: number;
}
const arg = argOf<Arg>();

// Fields as the recorded 0.24.4 PostToolUse carries them (samples/qwen-code-0.24.4.json).
const postToolUse = JSON.stringify({
  session_id: arg.session,
  transcript_path: `/home/dev/.qwen/projects/-home-dev-project/chats/${arg.session}.jsonl`,
  cwd: '/home/dev/project',
  hook_event_name: 'PostToolUse',
  permission_mode: 'yolo',
  prompt_id: `${arg.session}########0`,
  tool_name: 'run_shell_command',
  tool_input: { command: 'echo hi', description: 'shell command', is_background: false },
  tool_response: { llmContent: 'Command: echo hi\nOutput: hi\nExit Code: 0', returnDisplay: 'hi' },
  tool_use_id: 'toolu_bench_1',
  tool_call_id: 'call_bench_1',
  duration_ms: 5,
});

interface Settled {
  outcome: string;
  ms?: number;
  lane?: string;
  delivery?: string;
  reason?: string;
  detail?: string;
}

async function once(): Promise<Settled> {
  const q = arg.lane === 'serve' ? '&delivery=steer' : '&delivery=moment';
  const { ids } = JSON.parse((await post(`${arg.injectUrl}?session=${arg.session}&n=1${q}`, '{}')).text) as {
    ids: string[];
  };
  const id = ids[0]!;
  if (arg.lane === 'hook') {
    const reply = await post(arg.hookUrl, postToolUse);
    if (!reply.text.includes('keep the change small'))
      throw new Error(`the hook's reply carries no instruction: ${reply.text.slice(0, 300)}`);
  }
  const r = await fetch(`${arg.settledUrl}?id=${encodeURIComponent(id)}`);
  return (await r.json()) as Settled;
}

// The steer must have gone through the serve lane, the moment through the hooks (no lane named).
const throughItsLane = (s: Settled): boolean =>
  arg.lane === 'serve'
    ? s.lane === 'serve' && s.delivery === 'steer'
    : (s.lane === undefined || s.lane === 'hook') && (s.delivery === undefined || s.delivery === 'moment');
const deadline = Date.now() + 30_000;
let warmed = 0;
while (warmed < arg.warmup) {
  const s = await once();
  if (s.outcome === 'delivered') warmed += 1;
  else if (warmed > 0 || Date.now() > deadline)
    throw new Error(`${arg.lane} warm-up instruction ${s.outcome}: ${JSON.stringify(s)}`);
  else await new Promise((r) => setTimeout(r, 50));
}
const ms: number[] = [];
for (let i = 0; i < arg.n; i += 1) {
  const s = await once();
  if (s.outcome !== 'delivered' || s.ms === undefined || !throughItsLane(s))
    throw new Error(`${arg.lane} instruction not delivered through its lane: ${JSON.stringify(s)}`);
  ms.push(s.ms);
}
agent.destroy();
answer({ ms });
