// `aep-steer run <vendor> [args…]`: the vendor's own client on the adapter's native lane (D30).
// The adapter starts its lane (for Codex an app-server on a private socket) or reuses the one it
// runs; the stock client then joins it, so the person works as usual and the session can be steered
// into its running turn. Exits with the client's own exit code.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import type { Command } from 'commander';
import { readSecret, secretPath } from '../adapters/install.js';
import { tableFor, vendorTokens } from '../adapters/registry.js';
import type { LaneSpec, OwnedLaneSpec } from '../lanes/lane.js';

export const RUN_EXIT = { usage: 2, noAdapter: 3, laneFailed: 4 } as const;

/** Asks the adapter on `port` to ready its lanes; its answer by lane name, or why not. */
export function openAdapterLanes(port: number, secret: string): Promise<Record<string, unknown> | { error: string }> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: `/lanes/${secret}`, method: 'POST', timeout: 30_000 },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(body) as Record<string, unknown>;
          } catch {
            /* answered below */
          }
          if (res.statusCode === 200) resolve(parsed);
          else if (res.statusCode === 404) resolve({ error: 'not-found' });
          else resolve({ error: String(parsed.detail ?? `HTTP ${res.statusCode}`) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', (err) => resolve({ error: `unreachable: ${err.message}` }));
    req.end();
  });
}

export async function runVendor(
  token: string,
  args: string[],
  f: { port?: string },
  io: { err: NodeJS.WritableStream; in?: NodeJS.ReadableStream; out?: NodeJS.WritableStream },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const table =
    tableFor(token) ??
    vendorTokens()
      .map((t) => tableFor(t))
      .find((t) => t?.lanes?.some((l) => l.joins === 'owned' && l.command === token));
  const runs = (l: LaneSpec): l is OwnedLaneSpec =>
    l.joins === 'owned' && (l.client !== undefined || l.run !== undefined);
  const spec = table?.lanes?.find(runs);
  if (table === undefined || spec === undefined) {
    const runnable = vendorTokens().filter((t) => tableFor(t)?.lanes?.some(runs));
    io.err.write(`run: ${token} has no native lane to run on; \`aep-steer run\` takes ${runnable.join(', ')}\n`);
    return RUN_EXIT.usage;
  }
  const port = Number(f.port ?? (env.AEP_HOOK_PORT || table.port));
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    io.err.write(`run: bad adapter port "${f.port ?? env.AEP_HOOK_PORT}"\n`);
    return RUN_EXIT.usage;
  }
  const secret = readSecret(env);
  const vendor = table.token;
  const start = `start it first: \`aep-steer adapter ${vendor} --instruct\` (or \`aep-steer up\`), and \`aep-steer install ${vendor}\` once`;
  if (secret === undefined) {
    io.err.write(`run: no hook secret in ${secretPath(env)}: no ${vendor} adapter was set up here; ${start}\n`);
    return RUN_EXIT.noAdapter;
  }
  const opened = await openAdapterLanes(port, secret);
  if ('error' in opened && typeof opened.error === 'string') {
    const why =
      opened.error === 'not-found'
        ? `the adapter on 127.0.0.1:${port} runs no native lane (another vendor's adapter, or an older one)`
        : opened.error.startsWith('unreachable')
          ? `no adapter answers on 127.0.0.1:${port} (${opened.error}); ${start}`
          : `the adapter could not start its ${spec.name}: ${opened.error}`;
    io.err.write(`run: ${why}\n`);
    return opened.error.startsWith('unreachable') ? RUN_EXIT.noAdapter : RUN_EXIT.laneFailed;
  }
  const lane = ((opened as Record<string, unknown>)[spec.name] ?? {}) as Record<string, unknown>;
  if (spec.run !== undefined)
    return spec.run(env, lane, args, process.cwd(), {
      in: io.in ?? process.stdin,
      out: io.out ?? process.stdout,
      err: io.err,
    });
  const client = spec.client!(env, lane, args, process.cwd());
  const child = spawn(client.bin, client.args, { stdio: 'inherit', env });
  return new Promise((resolve) => {
    child.on('error', (err) => {
      io.err.write(`run: cannot start ${client.bin}: ${err.message}\n`);
      resolve(RUN_EXIT.laneFailed);
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      "run a vendor's own client on the adapter's native lane (codex: its TUI on the adapter's app-server; claude-code: a headless `claude -p` session in stream-json)",
    )
    .argument('<vendor>', 'the vendor token (codex, claude-code or claude)')
    .argument('[args...]', "the vendor CLI's own arguments, passed on")
    .option('--port <n>', "the adapter's hook port (AEP_HOOK_PORT; default the vendor's)")
    // The vendor's own options pass on as they are (`--` before them also works).
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .addHelpText(
      'after',
      "\nExit codes: the client's own; 2 usage (a vendor with no native lane), 3 no adapter answers, 4 the lane could not start.",
    )
    .action(async (vendor: string, args: string[], f: { port?: string }) => {
      process.exitCode = await runVendor(vendor, args, f, {
        err: process.stderr,
        in: process.stdin,
        out: process.stdout,
      });
    });
}
