// Starts a relay (in-process, port 0, in-memory store) and optionally a control-capable target
// claiming a session, prints `{"url": …}` on stdout, and runs until SIGTERM/SIGINT.
// Used by scripts/live-conformance.sh to run the AEP standard's live checker against this relay.
import { parseArgs } from 'node:util';
import { startRelay } from '../../src/relay/server.js';
import { startTestTarget } from './relay-target.js';

const { values } = parseArgs({
  options: { token: { type: 'string' }, buffer: { type: 'string' }, session: { type: 'string' }, run: { type: 'string' } },
});
const relay = await startRelay({ port: 0, storePath: ':memory:', ...(values.token ? { token: values.token } : {}), ...(values.buffer ? { bufferCap: Number(values.buffer) } : {}) });
let target: Awaited<ReturnType<typeof startTestTarget>> | undefined;
if (values.session) {
  target = await startTestTarget({ url: relay.socketUrl, ...(values.token ? { token: values.token } : {}), accepts: ['control.attention.respond', 'control.cancel'], sessions: [values.session] });
  if (values.run) target.link.send(target.emitter(values.session).emit({ type: 'run.started', run: values.run, data: { trigger: 'user' } }));
}
process.stdout.write(`${JSON.stringify({ url: relay.url })}\n`);
const stop = async () => {
  await target?.close();
  await relay.close();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
