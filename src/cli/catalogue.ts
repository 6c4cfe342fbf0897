// The command catalogue and the program built from it: only the command that runs is imported
// (`--version` and `--help` load no relay, store or machine code); the catalogue holds what the
// top-level help shows, each entry's loader the real command.
import { Command, CommanderError } from 'commander';
import { SteeringError } from '../protocol/errors.js';
import { USAGE_EXIT, VERSION } from './usage.js';
import { acceptVendorNames } from './vendor-names.js';

type Register = (program: Command) => void;

interface Entry {
  name: string;
  summary: string;
  load: () => Promise<Register>;
}

/** Every command, in help order; `install` also registers `uninstall`, `up` also `status` and `down`. */
export const CATALOGUE: readonly Entry[] = [
  {
    name: 'demo',
    summary: 'run the whole loop locally: relay, adapter, a session, one instruction, the audit',
    load: async () => (await import('./demo-command.js')).registerDemo,
  },
  {
    name: 'relay',
    summary: 'run the AEP relay (SQLite history, WebSocket, SSE, HTTP ingest)',
    load: async () => (await import('./relay-command.js')).registerRelay,
  },
  {
    name: 'adapter',
    summary: 'run a vendor adapter: hook endpoint, session runtime, relay link',
    load: async () => (await import('./adapter-command.js')).registerAdapter,
  },
  {
    name: 'up',
    summary: 'start the relay and adapters in the background (output in AEP_STATE_DIR/logs/), ready when it returns',
    load: async () => (await import('./services-command.js')).registerServices,
  },
  {
    name: 'status',
    summary: 'what up started: pid, port, relay link, uptime, last error',
    load: async () => (await import('./services-command.js')).registerServices,
  },
  {
    name: 'down',
    summary: 'stop exactly what up started',
    load: async () => (await import('./services-command.js')).registerServices,
  },
  {
    name: 'install',
    summary: "add the adapter hooks to a vendor's settings (keeps every other hook)",
    load: async () => (await import('./install-command.js')).registerInstall,
  },
  {
    name: 'uninstall',
    summary: "remove the adapter hooks from a vendor's settings (and nothing else)",
    load: async () => (await import('./install-command.js')).registerInstall,
  },
  {
    name: 'doctor',
    summary: 'check relay, token, adapter, hooks and vendor CLI; print each problem with its fix',
    load: async () => (await import('./doctor-command.js')).registerDoctor,
  },
  {
    name: 'hook',
    summary: 'command-hook fallback without curl (fails open)',
    load: async () => (await import('./hook-shim-command.js')).registerHook,
  },
  {
    name: 'instruct',
    summary: 'send an instruction to a live session and follow it to delivery',
    load: async () => (await import('./instruct-command.js')).registerInstruct,
  },
  {
    name: 'spawn',
    summary: 'start a worker session on an adapter run with --spawn-root; print its session id',
    load: async () => (await import('./spawn-command.js')).registerSpawn,
  },
  {
    name: 'wait',
    summary: "wait until a session's turn ends, a request of it waits, or it ends",
    load: async () => (await import('./wait-command.js')).registerWait,
  },
  {
    name: 'read',
    summary: "print a turn's final answer, as far as the token's capture allows",
    load: async () => (await import('./wait-command.js')).registerRead,
  },
  {
    name: 'withdraw',
    summary: "take back an instruction that still waits in a session's queue",
    load: async () => (await import('./withdraw-command.js')).registerWithdraw,
  },
  {
    name: 'run',
    summary: "run a vendor's own client on the adapter's native lane (codex: the TUI on its app-server)",
    load: async () => (await import('./run-command.js')).registerRun,
  },
  {
    name: 'stop',
    summary: 'end a session an adapter spawned (its process stopped, a worktree kept)',
    load: async () => (await import('./stop-command.js')).registerStop,
  },
  {
    name: 'cancel',
    summary: 'stop the turn a session is running, where its lane can (Cline, Codex on its app-server)',
    load: async () => (await import('./cancel-command.js')).registerCancel,
  },
  {
    name: 'queue',
    summary: "list what waits in a session's queue in order, or edit, move, promote, pause, resume, clear it",
    load: async () => (await import('./queue-command.js')).registerQueue,
  },
  {
    name: 'respond',
    summary: 'answer a held permission or form request',
    load: async () => (await import('./respond-command.js')).registerRespond,
  },
  {
    name: 'pending',
    summary: 'list held permission and form requests: id, session, kind, what is asked, age',
    load: async () => (await import('./pending-command.js')).registerPending,
  },
  {
    name: 'sessions',
    summary: 'list live sessions: vendor, state, last activity, queue (--all: ended too)',
    load: async () => (await import('./sessions-command.js')).registerSessions,
  },
  {
    name: 'watch',
    summary: 'follow the relay stream live (reconnects; --history N shows recent events)',
    load: async () => (await import('./watch-command.js')).registerWatch,
  },
  {
    name: 'audit',
    summary: "replay AEP JSONL logs and check every instruction's lifecycle",
    load: async () => (await import('./audit-command.js')).registerAudit,
  },
  {
    name: 'mcp',
    summary: 'serve the steering tools over stdio MCP (for orchestrating agents)',
    load: async () => (await import('./mcp-command.js')).registerMcp,
  },
  {
    name: 'console',
    summary: 'serve a local steering page (secret URL): sessions, instruct, allow/deny/answer, audit',
    load: async () => (await import('./console-command.js')).registerConsole,
  },
  {
    name: 'pair',
    summary: 'pair a phone with the running console: a QR code for a one-time code',
    load: async () => (await import('./pair-command.js')).registerPair,
  },
  {
    name: 'devices',
    summary: 'list paired devices; devices revoke NAME ends one',
    load: async () => (await import('./pair-command.js')).registerPair,
  },
  {
    name: 'inspect',
    summary: "serve a live page with each session's machine state and queue",
    load: async () => (await import('./inspect-command.js')).registerInspect,
  },
];

/** The command a command line names: the first word, or the one after `help`. */
export function commandNamed(args: readonly string[]): string | undefined {
  const first = args.find((a) => !a.startsWith('-'));
  if (first !== 'help') return first;
  return args.slice(args.indexOf('help') + 1).find((a) => !a.startsWith('-'));
}

function newProgram(): Command {
  return new Command('aep-steer')
    .description('Steering for coding agents over the Agent Event Protocol (AEP)')
    .version(VERSION)
    .showSuggestionAfterError(true)
    .exitOverride();
}

/** Builds the program for one command line: the named command for real, else the catalogue's summaries. */
async function programFor(args: readonly string[]): Promise<Command> {
  const program = newProgram();
  const entry = CATALOGUE.find((c) => c.name === commandNamed(args));
  if (entry !== undefined) {
    (await entry.load())(program);
    // Commander copies exitOverride only onto commands created after it was set; set it on all.
    for (const c of program.commands) c.exitOverride();
    acceptVendorNames(program);
  } else {
    for (const c of CATALOGUE) program.command(c.name).description(c.summary);
  }
  return program;
}

/** Runs one command line and returns the exit code the process should end with. */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  const program = await programFor(argv.slice(2));
  try {
    await program.parseAsync([...argv]);
    return undefined;
  } catch (err) {
    // --help and --version end here with exitCode 0; a bad flag or argument is a usage error (2),
    // and commander has already printed the message naming it.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : USAGE_EXIT;
    // A local failure (bad flag value, unreadable settings file, port taken) is a one-line message, not a stack.
    if (err instanceof SteeringError) {
      process.stderr.write(`aep-steer: ${err.message} [${err.code}]\n`);
      return 1;
    }
    throw err;
  }
}
