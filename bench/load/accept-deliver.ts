// Load generator for accept → deliver: `sessions` sessions at once, each doing `rounds` rounds of
// "hand over `perHook` instructions (the bench's inject port, as the relay would), then post one
// eligible hook and read the reply". The same round trips run against the echo server as the
// baseline. Answers `{ seconds, delivered, cpuMs }` (cpuMs: the server's CPU over the run).
import { answer, argOf } from '../lib/proc.js';
import { agent, post } from './http.js';

interface Arg {
  url: string;
  injectUrl: string;
  statsUrl: string;
  sessions: number;
  rounds: number;
  perHook: number;
  count: boolean;
}
const arg = argOf<Arg>();
const names = Array.from({ length: arg.sessions }, (_, i) => `bench-session-${i}`);
const hook = (s: string, e: string) => JSON.stringify({ session_id: s, hook_event_name: e });
const cpu = async (): Promise<number> => {
  const r = await post(arg.statsUrl, '{}');
  return r.text.startsWith('{"cpuMs"') ? (JSON.parse(r.text) as { cpuMs: number }).cpuMs : NaN;
};
await Promise.all(names.map((s) => post(arg.url, hook(s, 'SessionStart'))));
const cpu0 = await cpu();
const t0 = performance.now();
const counts = await Promise.all(
  names.map(async (s) => {
    let n = 0;
    for (let r = 0; r < arg.rounds; r += 1) {
      await post(`${arg.injectUrl}?session=${s}&n=${arg.perHook}`, '{}');
      const reply = await post(arg.url, hook(s, 'UserPromptSubmit'));
      // Each delivered instruction is one paragraph of the additionalContext (D8 prefix join).
      n += arg.count ? (reply.text.match(/keep the change small/g)?.length ?? 0) : arg.perHook;
    }
    return n;
  }),
);
const seconds = (performance.now() - t0) / 1000;
const cpuMs = (await cpu()) - cpu0;
agent.destroy();
answer({ seconds, delivered: counts.reduce((a, b) => a + b, 0), cpuMs });
