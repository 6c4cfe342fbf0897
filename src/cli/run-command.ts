// `aep-steer run <vendor> [args…]`: the vendor's own client on the adapter's native lane (D30).
// Codex: the run starts its own app-server with the caller's environment (what the person's
// `codex` would have: the model key, PATH, tools), the adapter joins it, and the stock TUI runs on
// it until it exits, taking its server with it. Claude Code: a headless session the adapter
// reaches. Qwen Code: a session of its own on the `qwen serve` daemon the adapter's lane attached.
// Before anything starts, a missing model key the vendor's CLI needs for certain stops it.
// Exits with the client's own exit code.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import type { Command } from 'commander';
import { readSecret, secretPath } from '../adapters/install.js';
import { tableFor, vendorTokens } from '../adapters/registry.js';
import type { LaneSpec, ServedLane } from '../adapters/lane-spec.js';
import { opencodeAttach } from './run-opencode.js';

export const RUN_EXIT = { usage: 2, noAdapter: 3, laneFailed: 4, noCredentials: 5 } as const;

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
  // opencode has no native lane of the table's kind: its TUI attaches to the server the adapter follows.
  if (token === 'opencode') {
    const c = await opencodeAttach(args, env, io.err, RUN_EXIT);
    return typeof c === 'number' ? c : runClient(c, c.env, io.err, undefined);
  }
  const runs = (l: LaneSpec): boolean =>
    l.joins === 'owned' ? l.client !== undefined || l.run !== undefined : l.run !== undefined;
  const table =
    tableFor(token) ??
    vendorTokens()
      .map((t) => tableFor(t))
      .find((t) => t?.lanes?.some((l) => l.joins === 'owned' && l.command === token));
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
  const vendor = table.token;
  const cwd = process.cwd();
  // Said before anything starts: a run on an owned lane starts the vendor's CLI (or its server)
  // with this terminal's environment, so this terminal's keys decide; an attached lane's session
  // runs in the daemon's.
  if (spec.joins === 'owned') {
    const gaps = (await table.credentials?.())?.gaps(env, { args, cwd }) ?? [];
    const certain = gaps.find((g) => g.certain);
    if (certain !== undefined) {
      io.err.write(
        `run: ${vendor} would fail its first prompt: this terminal lacks ${certain.missing}; ${certain.fix} here and run again\n`,
      );
      return RUN_EXIT.noCredentials;
    }
    for (const g of gaps)
      io.err.write(`run: warning: ${vendor} may not reach its model: this terminal lacks ${g.missing}; ${g.fix}\n`);
  }
  const secret = readSecret(env);
  const start =
    spec.joins === 'attached'
      ? `start it first: \`aep-steer up ${vendor} --serve --instruct\`, and \`aep-steer install ${vendor}\` once`
      : `start it first: \`aep-steer adapter ${vendor} --instruct\` (or \`aep-steer up\`), and \`aep-steer install ${vendor}\` once`;
  if (secret === undefined) {
    io.err.write(`run: no hook secret in ${secretPath(env)}: no ${vendor} adapter was set up here; ${start}\n`);
    return RUN_EXIT.noAdapter;
  }
  const noLane =
    spec.joins === 'attached'
      ? `the ${vendor} adapter on 127.0.0.1:${port} has no ${spec.name} lane; start it with one: \`aep-steer down ${vendor}\`, then \`aep-steer up ${vendor} --serve --instruct\``
      : `the adapter on 127.0.0.1:${port} runs no ${spec.name} lane (another vendor's adapter, or an older one); start the ${vendor} adapter there: \`aep-steer up ${vendor} --instruct\``;
  const opened = await openAdapterLanes(port, secret);
  if ('error' in opened && typeof opened.error === 'string') {
    const why =
      opened.error === 'not-found'
        ? noLane
        : opened.error.startsWith('unreachable')
          ? `no adapter answers on 127.0.0.1:${port} (${opened.error}); ${start}`
          : `the adapter could not start its ${spec.name}: ${opened.error}`;
    io.err.write(`run: ${why}\n`);
    return opened.error.startsWith('unreachable') ? RUN_EXIT.noAdapter : RUN_EXIT.laneFailed;
  }
  let lane = ((opened as Record<string, unknown>)[spec.name] ?? undefined) as Record<string, unknown> | undefined;
  if (lane === undefined) {
    io.err.write(`run: ${noLane}\n`);
    return RUN_EXIT.laneFailed;
  }
  const stdio = { in: io.in ?? process.stdin, out: io.out ?? process.stdout, err: io.err };
  if (spec.run !== undefined) return spec.run(env, lane, args, cwd, stdio);
  if (spec.joins !== 'owned' || spec.client === undefined) return RUN_EXIT.usage;
  let served: ServedLane | undefined;
  if (spec.serve !== undefined) {
    try {
      served = await spec.serve(env, lane, cwd);
    } catch (err) {
      io.err.write(`run: cannot start the ${spec.name}: ${(err as Error).message}\n`);
      return RUN_EXIT.laneFailed;
    }
    // The adapter joins the server this run started; without it the session could not be steered.
    const joined = await openAdapterLanes(port, secret);
    const now = (joined as Record<string, unknown>)[spec.name] as { servers?: unknown } | undefined;
    if (!Array.isArray(now?.servers) || !now.servers.includes(served.address)) {
      await served.stop();
      const why = 'error' in joined ? String(joined.error) : `it did not join ${served.address}`;
      io.err.write(
        `run: the adapter on 127.0.0.1:${port} could not join this run's ${spec.name} (${why}); nothing was left running\n`,
      );
      return RUN_EXIT.laneFailed;
    }
    lane = { ...lane, address: served.address };
  }
  const client = spec.client(env, lane, args, cwd);
  return runClient(client, env, io.err, served);
}

/** Runs the client on the caller's terminal; a server the run started ends with it. */
function runClient(
  client: { bin: string; args: string[] },
  env: NodeJS.ProcessEnv,
  err: NodeJS.WritableStream,
  served: ServedLane | undefined,
): Promise<number> {
  const child = spawn(client.bin, client.args, { stdio: 'inherit', env });
  // A terminal closed or a `kill` of the run reaches the client, so the server is stopped after it.
  const pass = (s: NodeJS.Signals) => () => child.kill(s);
  const onHup = pass('SIGHUP');
  const onTerm = pass('SIGTERM');
  process.on('SIGHUP', onHup);
  process.on('SIGTERM', onTerm);
  const done = async (code: number): Promise<number> => {
    process.off('SIGHUP', onHup);
    process.off('SIGTERM', onTerm);
    await served?.stop();
    return code;
  };
  return new Promise((resolve) => {
    child.on('error', (e) => {
      err.write(`run: cannot start ${client.bin}: ${e.message}\n`);
      void done(RUN_EXIT.laneFailed).then(resolve);
    });
    child.on('exit', (code, signal) => {
      const sig =
        signal === null ? undefined : ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15, SIGKILL: 9 } as const)[signal as string];
      void done(code ?? 128 + (sig ?? 1)).then(resolve);
    });
  });
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      "run a vendor's own client on the adapter's native lane (codex: its TUI on an app-server of its own with this terminal's environment; claude-code: a headless `claude -p` session in stream-json; qwen-code: a session on the `qwen serve` daemon of `up qwen-code --serve`; opencode: its TUI attached to the server `up opencode` starts)",
    )
    .argument('<vendor>', 'the vendor (codex, claude-code or claude, qwen-code or qwen, opencode)')
    .argument('[args...]', "the vendor CLI's own arguments, passed on")
    .option('--port <n>', "the adapter's hook port (AEP_HOOK_PORT; default the vendor's)")
    // The vendor's own options pass on as they are (`--` before them also works).
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .addHelpText(
      'after',
      "\nExit codes: the client's own; 2 usage (a vendor with no native lane), 3 no adapter answers, 4 the lane could not start, 5 this terminal lacks the model key the vendor's CLI needs.",
    )
    .action(async (vendor: string, args: string[], f: { port?: string }) => {
      process.exitCode = await runVendor(vendor, args, f, {
        err: process.stderr,
        in: process.stdin,
        out: process.stdout,
      });
    });
}
