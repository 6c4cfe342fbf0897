// `aep-steer hook <vendor>`: the Node fallback of the command-hook shim, for hosts without curl.
// Same contract as src/adapters/shim/aep-steer-hook.sh (D15): hook JSON on stdin is posted to
// the adapter, the reply goes to stdout, and any failure prints the vendor's neutral reply and
// exits 0. The shell shim stays the fast path (a Node start costs far more than sh + curl).
import { request } from 'node:http';
import type { Command } from 'commander';
import { hookUrl, readSecret } from '../adapters/install.js';
import { tableFor, vendorTokens } from '../adapters/registry.js';

export interface HookShimFlags {
  url?: string;
  port?: string;
  timeout?: string;
}

export interface HookShimIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
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

function postOnce(url: string, body: Buffer, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (v: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      req.destroy();
      finish(undefined);
    }, timeoutMs);
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish(res.statusCode === 200 ? Buffer.concat(chunks).toString('utf8') : undefined));
      res.on('error', () => finish(undefined));
    });
    req.on('error', () => finish(undefined));
    req.end(body);
  });
}

/** Runs one hook call; always resolves (exit code 0): failures print the neutral reply. */
export async function runHookShim(token: string, flags: HookShimFlags, io: HookShimIo): Promise<void> {
  const env = io.env ?? process.env;
  const table = tableFor(token);
  const neutral = table?.replies.neutral;
  const printNeutral = () => {
    if (neutral !== undefined) io.stdout.write(`${JSON.stringify(neutral)}\n`);
  };
  let reply: string | undefined;
  try {
    const body = await readAll(io.stdin);
    const seconds = Number(flags.timeout ?? DEFAULT_TIMEOUT_S);
    const timeoutMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_TIMEOUT_S * 1000;
    let url = flags.url;
    if (url === undefined && table !== undefined) {
      const secret = readSecret(env);
      const port = Number(flags.port ?? env.AEP_HOOK_PORT ?? table.port);
      if (secret !== undefined && Number.isInteger(port)) url = hookUrl(port, secret);
    }
    if (url !== undefined) reply = await postOnce(url, body, timeoutMs);
  } catch {
    reply = undefined;
  }
  if (reply === undefined || reply.trim() === '') printNeutral();
  else io.stdout.write(reply.endsWith('\n') ? reply : `${reply}\n`);
}

export function registerHook(program: Command): void {
  program
    .command('hook')
    .description('command-hook fallback without curl: post the hook JSON on stdin to the adapter, print its reply (fails open)')
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')})`)
    .option('--url <url>', 'the adapter hook URL (default: 127.0.0.1, the port and the stored secret)')
    .option('--port <n>', 'adapter hook port (AEP_HOOK_PORT; default: the vendor\'s)')
    .option('--timeout <seconds>', `give up after this long and print the neutral reply (default ${DEFAULT_TIMEOUT_S})`)
    .action(async (token: string, flags: HookShimFlags) => {
      await runHookShim(token, flags, { stdin: process.stdin, stdout: process.stdout });
    });
}
