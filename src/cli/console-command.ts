// `aep-steer console`: a local steering page for a person (127.0.0.1, a secret URL per start):
// live sessions with state and queue, an instruction box followed to delivered or dropped,
// allow / deny / answer for held requests, and each session's audit.
import type { Command } from 'commander';
import { readTokenFile } from '../consumer/connect.js';
import { SteeringError } from '../protocol/errors.js';
import { DEFAULT_CONSOLE_PORT, DEFAULT_CONSOLE_SENDER, startConsole, type ConsoleHandle } from '../console/start.js';
import { addRelayOptions, type RelayFlags } from './relay-options.js';
import { exitOnSignal } from './exit-on-signal.js';
import { explainListenError } from '../services/port-holder.js';
import { addReachOptions, reachOptions, type ReachFlags } from './console-reach.js';
import { targetLabel } from '../notify/targets.js';
import { addPhoneOptions, phoneAtStart, type PhoneFlags } from './console-phone.js';

interface ConsoleFlags extends RelayFlags, ReachFlags, PhoneFlags {
  port: string;
  tokenFile?: string;
}

export function registerConsole(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  const cmd = program
    .command('console')
    .description('serve a local steering page (127.0.0.1, secret URL): sessions, instruct, allow/deny/answer, audit')
    .option('--port <n>', 'page port on 127.0.0.1 (0 = any free one)', String(DEFAULT_CONSOLE_PORT))
    .option(
      '--token-file <path>',
      'read the relay token from this file, mode 600 (AEP_TOKEN_FILE)',
      env['AEP_TOKEN_FILE'] || undefined,
    );
  // Its own sender name by default, so the audit tells these commands from a person's CLI.
  addRelayOptions(cmd, env, DEFAULT_CONSOLE_SENDER);
  addReachOptions(cmd, env);
  addPhoneOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nThe URL it prints carries a secret made anew at each start; anyone with it can steer through this console.\nExit codes: 2 bad flag, 4 port taken, 1 other failure.',
  );
  cmd.action(async (f: ConsoleFlags) => {
    const port = Number(f.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`console: --port must be 0-65535, got "${f.port}"\n`);
      process.exitCode = 2;
      return;
    }
    let reach: ReturnType<typeof reachOptions>;
    try {
      reach = reachOptions(f, env);
    } catch (err) {
      process.stderr.write(`console: ${(err as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
    const phone = phoneAtStart(f, port, reach);
    if (phone.done) return;
    const token = f.tokenFile !== undefined ? readTokenFile(f.tokenFile) : f.token;
    let handle: ConsoleHandle;
    try {
      handle = await startConsole({
        relay: f.relay,
        sender: f.sender,
        port,
        ...(token ? { token } : {}),
        ...reach,
        phone: { onPaired: (d) => process.stdout.write(`  paired ${d.name} (rights ${d.rights})\n`) },
      });
    } catch (caught) {
      const err = explainListenError(caught, 'console port', port, reach.host ?? '127.0.0.1', '--port');
      process.stderr.write(`console: ${err instanceof SteeringError ? err.message : String(err)}\n`);
      process.exitCode = err instanceof SteeringError && err.code === 'PORT_IN_USE' ? 4 : 1;
      return;
    }
    process.stdout.write(
      `aep-steer console: ${handle.url}\n  (relay ${f.relay}; open the URL in a browser, Ctrl+C stops)\n`,
    );
    if (handle.localUrl !== handle.url)
      process.stdout.write(
        `  listening on ${new URL(handle.localUrl).host}; links name ${new URL(handle.url).origin}\n`,
      );
    for (const t of reach.notify ?? [])
      process.stdout.write(`  notify ${targetLabel(t)} (capture ${t.capture}; on ${t.on.join(', ')})\n`);
    await phone.started(handle);
    handle.follower.ready.catch((err: Error) => process.stderr.write(`console: ${err.message}; retrying\n`));
    exitOnSignal(() => handle.close());
  });
}
