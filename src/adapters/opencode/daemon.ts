// Starting an `opencode serve` server for the adapter to follow (`aep-steer up opencode`, `aep-steer
// run opencode`): which binary, which command line, the password file (mode 600) it requires on
// every route, and how to tell that it serves. The password goes in its environment
// (OPENCODE_SERVER_PASSWORD), never on a command line every process list shows.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The server's port when none is asked for (the vendor's own default, and the adapter's `--serve`). */
export const OPENCODE_SERVE_PORT = 4096;
/** The service name `up` records the server under, and the password file's name in the state dir. */
export const OPENCODE_DAEMON = 'opencode-serve';

/** `AEP_OPENCODE_BIN`, else `opencode` on PATH; undefined when neither is there. */
export function opencodeBinary(env: NodeJS.ProcessEnv): string | undefined {
  if (env.AEP_OPENCODE_BIN) return existsSync(env.AEP_OPENCODE_BIN) ? env.AEP_OPENCODE_BIN : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter))
    if (dir !== '' && existsSync(join(dir, 'opencode'))) return join(dir, 'opencode');
  return undefined;
}

/** The server's command line and environment: loopback only, every route behind the password. */
export function opencodeServeCommand(
  bin: string,
  port: number,
  password: string,
  env: NodeJS.ProcessEnv,
): { argv: string[]; env: NodeJS.ProcessEnv } {
  return {
    argv: [bin, 'serve', '--hostname', '127.0.0.1', '--port', String(port)],
    env: { ...env, OPENCODE_SERVER_PASSWORD: password },
  };
}

/** Basic auth for the server (user `opencode`, or the AEP_OPENCODE_USERNAME the adapter uses too). */
function opencodeAuth(password: string, env: NodeJS.ProcessEnv = process.env): string {
  return `Basic ${Buffer.from(`${env.AEP_OPENCODE_USERNAME || 'opencode'}:${password}`).toString('base64')}`;
}

/** True when an opencode server answers its session list at `url` with this password. */
export async function opencodeAnswers(url: string, password: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await fetch(`${url.replace(/\/+$/, '')}/api/session`, {
      headers: { authorization: opencodeAuth(password), accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    return res.status === 200;
  } catch {
    return false;
  }
}
