// Runs a command with one JetStream server for it (AEP_TEST_NATS_URL, AEP_TEST_STORE=nats),
// then kills the server: `tsx scripts/with-nats.ts node scripts/test.mjs test/relay .test.ts`.
import { spawn } from 'node:child_process';
import { startNatsServer } from '../test/support/nats-server.js';

const [cmd, ...args] = process.argv.slice(2);
if (cmd === undefined) {
  console.error('usage: tsx scripts/with-nats.ts <command> [args...]');
  process.exit(2);
}
const server = await startNatsServer();
console.log(`nats-server ${server.url} (JetStream, ${server.dir})`);
const child = spawn(cmd, args, {
  stdio: 'inherit',
  env: { ...process.env, AEP_TEST_STORE: 'nats', AEP_TEST_NATS_URL: server.url },
});
const code = await new Promise<number>((resolve) => child.once('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
await server.stop();
process.exit(code);
