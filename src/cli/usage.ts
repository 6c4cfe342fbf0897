// What every command shares about its command line: the version it reports and the exit code of
// a usage error (a bad flag, value or argument), whatever the command.
export const VERSION = '0.1.0';

/** A bad option, value or argument; the message names it (docs/commands.md). */
export const USAGE_EXIT = 2;

/** The exit codes the commands that send one command through the relay share (docs/commands.md). */
export const SEND_EXIT = {
  usage: USAGE_EXIT,
  rejected: 3,
  refused: 4,
  timeout: 6,
  unreachable: 7,
  unauthorized: 8,
} as const;
