// `aep-steer`: parses the command line and hands over to one module per command.
import { Command } from 'commander';
import { SteeringError } from '../protocol/errors.js';
import { registerAdapter } from './adapter-command.js';
import { registerHook } from './hook-shim-command.js';
import { registerAudit } from './audit-command.js';
import { registerConsole } from './console-command.js';
import { registerDemo } from './demo-command.js';
import { registerInspect } from './inspect-command.js';
import { registerInstall } from './install-command.js';
import { registerInstruct } from './instruct-command.js';
import { registerMcp } from './mcp-command.js';
import { registerRelay } from './relay-command.js';
import { registerRespond } from './respond-command.js';
import { registerSessions } from './sessions-command.js';
import { registerWatch } from './watch-command.js';

const program = new Command('aep-steer')
  .description('Steering for coding agents over the Agent Event Protocol (AEP)')
  .version('0.1.0');

for (const register of [
  registerDemo, registerRelay, registerAdapter, registerInstall, registerHook, registerInstruct, registerRespond,
  registerSessions, registerWatch, registerAudit, registerInspect, registerMcp, registerConsole,
]) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // A local failure (bad flag value, unreadable settings file, port taken) is a one-line message, not a stack.
  if (err instanceof SteeringError) {
    process.stderr.write(`aep-steer: ${err.message} [${err.code}]\n`);
    process.exit(1);
  }
  throw err;
}
