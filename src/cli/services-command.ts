// `aep-steer up [vendors…]`, `status`, `down`: the relay and adapters as background services, so
// the terminal an agent's TUI runs in never gets their output. `up` starts each one detached with
// its output in `$AEP_STATE_DIR/logs/<name>.log`, waits until it serves, and writes nothing after
// it returns; `status` says what runs; `down` stops exactly what `up` started (records in run/).
// `up qwen-code --serve` also starts (or attaches to) a `qwen serve` daemon for the serve lane,
// with its token in a mode-600 file, started before the adapter and stopped after it. Before
// anything starts, `up` warns of a vendor whose CLI would lack its model credentials here.
// Each command's work is in its own module (services-up, -status, -down); this one registers them.
import type { Command } from 'commander';
import { vendorTokens } from '../adapters/vendors.js';
import { QWEN_SERVE_PORT } from '../adapters/qwen-code/serve/daemon.js';
import { DEFAULT_READY_MS, DEFAULT_RELAY_PORT, type UpFlags } from './services-base.js';
import { up } from './services-up.js';
import { status } from './services-status.js';
import { down } from './services-down.js';

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

export function registerServices(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  program
    .command('up')
    .description("start the relay and the named vendors' adapters in the background, output in AEP_STATE_DIR/logs/")
    .argument('[vendors...]', `vendor tokens (${vendorTokens().join(', ')})`)
    .option('--relay-port <n>', `the relay's port on 127.0.0.1 (AEP_PORT; default ${DEFAULT_RELAY_PORT})`)
    .option(
      '--hook-port <[vendor=]n>',
      "an adapter's hook port, repeatable (default: the vendor's, D15; one vendor: AEP_HOOK_PORT)",
      collect,
      [],
    )
    .option('--instruct', 'the adapters accept x.<vendor>.control.instruct (AEP_INSTRUCT=1, D5)')
    .option(
      '--serve [url]',
      `qwen-code: start a \`qwen serve\` daemon in this folder for the serve lane (or attach to the one at URL), token in a mode-600 file; opencode: attach to the \`opencode serve\` at URL instead of starting one in this folder`,
    )
    .option('--serve-port <n>', `the daemon's port on 127.0.0.1 (default ${QWEN_SERVE_PORT})`)
    .option(
      '--serve-token-file <path>',
      "the mode-600 file holding the daemon's token (default AEP_STATE_DIR/qwen-serve.token, created if missing)",
    )
    .option('--timeout-ms <ms>', 'how long each service may take to become ready', String(DEFAULT_READY_MS))
    .addHelpText(
      'after',
      '\nExit codes: 0 every service ready, 1 one did not become ready (nothing this run started is left),' +
        ' 2 usage, 3 a port is taken (nothing started).',
    )
    .action(async (vendors: string[], f: UpFlags) => {
      process.exitCode = await up(vendors, f, env);
    });
  program
    .command('status')
    .description('what aep-steer up started: pid, port, relay link, uptime, last error')
    .option('--json', 'one JSON array')
    .addHelpText('after', '\nExit codes: 0 everything up started runs, 1 something it started is not running, 2 usage.')
    .action(async (f: { json?: boolean }) => {
      process.exitCode = await status(f.json, env);
    });
  program
    .command('down')
    .description('stop what aep-steer up started (all, or the vendors named and "relay")')
    .argument(
      '[services...]',
      'vendor tokens, "relay", "qwen-serve" or "opencode-serve" (default: everything up started)',
    )
    .action(async (names: string[]) => {
      process.exitCode = await down(names, env);
    });
}
