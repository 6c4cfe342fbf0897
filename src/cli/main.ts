// `aep-steer`: parses the command line and hands over to one module per command.
import { Command } from 'commander';
import { registerAdapter } from './adapter-command.js';
import { registerAudit } from './audit-command.js';
import { registerDemo } from './demo-command.js';
import { registerInspect } from './inspect-command.js';
import { registerInstall } from './install-command.js';
import { registerInstruct } from './instruct-command.js';
import { registerRelay } from './relay-command.js';
import { registerRespond } from './respond-command.js';
import { registerSessions } from './sessions-command.js';
import { registerWatch } from './watch-command.js';

const program = new Command('aep-steer')
  .description('Steering for coding agents over the Agent Event Protocol (AEP)')
  .version('0.1.0');

for (const register of [
  registerDemo, registerRelay, registerAdapter, registerInstall, registerInstruct, registerRespond,
  registerSessions, registerWatch, registerAudit, registerInspect,
]) register(program);

await program.parseAsync(process.argv);
