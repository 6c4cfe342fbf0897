// A minimal program holding only `aep-steer console`, so tests run the command as a real process
// without depending on the full CLI.
import { Command } from 'commander';
import { registerConsole } from '../../src/cli/console-command.js';

const program = new Command('aep-steer');
registerConsole(program);
await program.parseAsync(process.argv);
