// `aep-steer hook <vendor>`: the Node fallback of the command-hook shim, for hosts without curl.
// Same contract as src/adapters/shim/aep-steer-hook.sh (D15): hook JSON on stdin is posted to
// the adapter, the reply goes to stdout, and any failure prints the vendor's neutral reply and
// exits 0, saying once on stderr why the adapter could not be reached, and leaving each failed
// hook in the state directory's trace as the shell shim does (adapters/shim-trace.ts). The shell shim stays the
// fast path (a Node start costs far more than sh + curl; `npm run bench` measures both).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { hookUrl, readSecret, secretPath } from '../adapters/install.js';
import { stateDir } from '../protocol/state-dir.js';
import { appendTrace, OUTAGE_FILE } from '../adapters/shim-trace.js';
// Only the one vendor's table (not the registry, which loads every vendor): this runs on every hook.
import { loadTable, vendorTokens } from '../adapters/vendors.js';

export interface HookShimFlags {
  url?: string;
  port?: string;
  timeout?: string;
}

export interface HookShimIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  /** Where the one-line reason goes when the adapter cannot be reached (default stderr). */
  stderr?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_TIMEOUT_S = 10;

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer | string) => chunks.push(typeof c === 'string' ? Buffer.from(c) : c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The adapter's reply, or why there is none (said once to the user, on stderr) and its HTTP status, if any. */
type Posted = { reply: string } | { problem: string; status?: number };

function postOnce(url: string, body: Buffer, timeoutMs: number): Promise<Posted> {
  const where = new URL(url).host;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (v: Posted) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      req.destroy();
      finish({ problem: `the adapter on ${where} did not answer within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode === 200) finish({ reply: Buffer.concat(chunks).toString('utf8') });
          else if (res.statusCode === 404)
            finish({
              problem: `the adapter on ${where} does not know this hook secret (HTTP 404): run \`aep-steer install <vendor>\` again, then restart the adapter`,
              status: 404,
            });
          else
            finish({ problem: `the adapter on ${where} answered HTTP ${res.statusCode}`, status: res.statusCode ?? 0 });
        });
        res.on('error', () => finish({ problem: `the adapter on ${where} broke off its reply` }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        problem:
          err.code === 'ECONNREFUSED'
            ? `no adapter is listening on ${where}: start it with \`aep-steer adapter <vendor>\` (the agent goes on unsteered meanwhile)`
            : `cannot reach the adapter on ${where}: ${err.message}`,
      }),
    );
    req.end(body);
  });
}

/**
 * Says a problem on stderr once per outage: the same reason stays quiet on the next hooks until a
 * hook gets through again, so the agent's output is not flooded (a marker in the state directory).
 */
function sayOnce(token: string, problem: string, env: NodeJS.ProcessEnv, err: NodeJS.WritableStream): void {
  const marker = join(stateDir(env), `hook-unreachable.${token}`);
  try {
    if (existsSync(marker) && readFileSync(marker, 'utf8') === problem) return;
    mkdirSync(dirname(marker), { recursive: true, mode: 0o700 });
    writeFileSync(marker, problem, { mode: 0o600 });
  } catch {
    // No state directory to remember it in: say it every time rather than never.
  }
  err.write(`aep-steer hook ${token}: ${problem}\n`);
}

/** host:port of the hook URL for the trace, never its secret path. */
function traceWhere(url: string | undefined): string {
  try {
    return url === undefined ? '-' : new URL(url).host;
  } catch {
    return '-';
  }
}

function clearOutage(token: string, env: NodeJS.ProcessEnv): void {
  try {
    rmSync(join(stateDir(env), `hook-unreachable.${token}`), { force: true });
    rmSync(join(stateDir(env), OUTAGE_FILE), { force: true });
  } catch {
    // Nothing to clear.
  }
}

/** Runs one hook call; always resolves (exit code 0): failures print the neutral reply. */
export async function runHookShim(token: string, flags: HookShimFlags, io: HookShimIo): Promise<void> {
  const env = io.env ?? process.env;
  const err = io.stderr ?? process.stderr;
  // A table that fails to load leaves no neutral reply to print: the hook still exits 0.
  const table = await loadTable(token).catch(() => undefined);
  const neutral = table?.replies.neutral;
  const printNeutral = () => {
    if (neutral !== undefined) io.stdout.write(`${JSON.stringify(neutral)}\n`);
  };
  let posted: Posted;
  let url = flags.url;
  try {
    const body = await readAll(io.stdin);
    const seconds = Number(flags.timeout ?? DEFAULT_TIMEOUT_S);
    const timeoutMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_TIMEOUT_S * 1000;
    let problem: string | undefined;
    if (url === undefined && table === undefined)
      problem = `unknown vendor "${token}"; known: ${vendorTokens().join(', ')}`;
    else if (url === undefined) {
      const secret = readSecret(env);
      const port = Number(flags.port || env.AEP_HOOK_PORT || table!.port);
      if (secret === undefined) problem = `no hook secret in ${secretPath(env)}: run \`aep-steer install ${token}\``;
      else if (!Number.isInteger(port) || port < 1 || port > 65535)
        problem = `bad adapter port "${flags.port ?? env.AEP_HOOK_PORT}"`;
      else url = hookUrl(port, secret);
    }
    posted = url === undefined ? { problem: problem! } : await postOnce(url, body, timeoutMs);
  } catch (e) {
    posted = { problem: `could not post the hook: ${(e as Error).message}` };
  }
  if ('problem' in posted) {
    const status = String(posted.status ?? 0).padStart(3, '0');
    const why = `${posted.problem}; the agent got the neutral reply`;
    appendTrace(stateDir(env), { where: traceWhere(url), outcome: `failed http=${status}`, why });
    sayOnce(token, posted.problem, env, err);
    printNeutral();
    return;
  }
  clearOutage(token, env);
  if (env.AEP_HOOK_TRACE === 'all')
    appendTrace(stateDir(env), { where: traceWhere(url), outcome: 'ok http=200', why: 'delivered' });
  const reply = posted.reply;
  if (reply.trim() === '') printNeutral();
  else io.stdout.write(reply.endsWith('\n') ? reply : `${reply}\n`);
}

export function registerHook(program: Command): void {
  program
    .command('hook')
    .description(
      'command-hook fallback without curl: post the hook JSON on stdin to the adapter, print its reply (fails open)',
    )
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')})`)
    .option('--url <url>', 'the adapter hook URL (default: 127.0.0.1, the port and the stored secret)')
    .option('--port <n>', "adapter hook port (AEP_HOOK_PORT; default: the vendor's)")
    .option('--timeout <seconds>', `give up after this long and print the neutral reply (default ${DEFAULT_TIMEOUT_S})`)
    .action(async (token: string, flags: HookShimFlags) => {
      await runHookShim(token, flags, { stdin: process.stdin, stdout: process.stdout });
    });
}
