// Child process for the crash-consistency test: a real adapter with a real fsynced log, fed
// sessions and instructions as fast as it takes them. Each ack is printed (one JSON line) only
// after the adapter emitted it, so everything printed must survive a SIGKILL at any moment.
// Usage: tsx test/support/log-writer.ts <log path>
import { startAdapter } from '../../src/streams/run.js';
import { fakeSurface, hookBody } from './fake-surface.js';
import { instructCmd } from './session-steps.js';

const logPath = process.argv[2];
if (!logPath) throw new Error('log path required');
const a = await startAdapter({
  surface: fakeSurface(),
  port: 0,
  secret: 'crash-secret',
  logPath,
  instruct: true,
  host: 'crash-host',
  onError: () => undefined,
});
a.events$.subscribe((e) => {
  if (e.type === 'control.accepted')
    process.stdout.write(`${JSON.stringify({ session: e.session, cause: e.cause, ack: JSON.stringify(e) })}\n`);
});
// A subagent's SessionStart is not an eligible moment (D7): instructions stay queued, so the
// rebuilt queues show exactly what was accepted.
for (let s = 0; ; s += 1) {
  const session = `crash-${s}`;
  await fetch(a.hookUrl, {
    method: 'POST',
    body: JSON.stringify(hookBody('SessionStart', session, { agent_id: 'sub' })),
  });
  for (let i = 0; i < 20; i += 1) a.command(instructCmd(`c-${s}-${i}`, `instruction ${i} of ${session}`, session));
  await new Promise((resolve) => setImmediate(resolve));
}
