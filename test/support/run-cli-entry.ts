// A minimal program holding only `aep-steer run`, so tests run the command as a real process
// (in tmux, as a person would) without depending on the full CLI.
import { Command } from 'commander';
import { registerRun } from '../../src/cli/run-command.js';

const program = new Command('aep-steer');
registerRun(program);
await program.parseAsync(process.argv);
