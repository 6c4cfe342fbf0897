// A minimal program holding only `aep-steer relay`, so tests run the command as a real process
// without depending on the full CLI.
import { Command } from 'commander';
import { registerRelay } from '../../src/cli/relay-command.js';

const program = new Command('aep-steer');
registerRelay(program);
await program.parseAsync(process.argv);
