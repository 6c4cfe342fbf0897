// Starting a `qwen serve` daemon for the serve lane (`aep-steer up qwen-code --serve`): which
// binary, which command line, the token file (mode 600) whose token it requires on every route,
// and how to tell that it serves. The token goes in its environment (QWEN_SERVER_TOKEN), never on a
// command line every process list shows (Qwen Code 0.24.4 `qwen serve --help`).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve, sep } from 'node:path';
import { readTokenFile } from '../../../protocol/secret.js';
import { writePrivateFile } from '../../../protocol/state-dir.js';

/** The daemon's port when none is asked for (the vendor's own default). */
export const QWEN_SERVE_PORT = 4170;

/** `AEP_QWEN_BIN`, else `qwen` on PATH; undefined when neither is there. */
export function qwenBinary(env: NodeJS.ProcessEnv): string | undefined {
  if (env.AEP_QWEN_BIN) return existsSync(env.AEP_QWEN_BIN) ? env.AEP_QWEN_BIN : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter))
    if (dir !== '' && existsSync(join(dir, 'qwen'))) return join(dir, 'qwen');
  return undefined;
}

/** The token in `path`, written there first (random, mode 600) when the file does not exist. */
export function ensureServeToken(path: string): { token: string; created: boolean } {
  if (existsSync(path)) return { token: readTokenFile(path), created: false };
  const token = randomBytes(32).toString('hex');
  writePrivateFile(path, `${token}\n`);
  return { token, created: true };
}

/**
 * The daemon's command line and environment: loopback only, every route behind the token
 * (`--require-auth`: `/health` too), its web shell kept (it asks for the token).
 */
export function qwenServeCommand(
  bin: string,
  port: number,
  token: string,
  env: NodeJS.ProcessEnv,
): { argv: string[]; env: NodeJS.ProcessEnv } {
  return {
    argv: [bin, 'serve', '--hostname', '127.0.0.1', '--port', String(port), '--require-auth'],
    env: { ...env, QWEN_SERVER_TOKEN: token },
  };
}

/** True when a `qwen serve` daemon answers `GET /health` at `url` with this token. */
export async function serveAnswers(url: string, token: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await fetch(`${url.replace(/\/+$/, '')}/health`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Why the daemon's sessions in `cwd` would not run the project's hooks: Qwen Code's folder trust
 * is on (`security.folderTrust.enabled`) and no rule in `trustedFolders.json` trusts the folder,
 * so its `.qwen/settings.json` (the hooks `aep-steer install qwen-code --project` wrote) is
 * ignored (observed on 0.24.4). Undefined when the folder is trusted or has no project hooks.
 */
export function untrustedHooks(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const qwenDir = env.QWEN_HOME || join(env.HOME || homedir(), '.qwen');
  const read = (path: string): Record<string, unknown> | undefined => {
    try {
      const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const project = join(resolve(cwd), '.qwen', 'settings.json');
  if (read(project)?.hooks === undefined) return undefined;
  const security = read(join(qwenDir, 'settings.json'))?.security as
    | { folderTrust?: { enabled?: unknown } }
    | undefined;
  if (security?.folderTrust?.enabled !== true) return undefined;
  const rulesPath = env.QWEN_CODE_TRUSTED_FOLDERS_PATH || join(qwenDir, 'trustedFolders.json');
  const rules = Object.entries(read(rulesPath) ?? {});
  const dir = resolve(cwd);
  const under = (root: string) => dir === root || dir.startsWith(`${root}${sep}`);
  // The most specific rule wins, as Qwen Code decides.
  const best = rules
    .map(([p, level]) => ({ root: level === 'TRUST_PARENT' ? dirname(resolve(p)) : resolve(p), level }))
    .filter((r) => under(r.root))
    .sort((a, b) => b.root.length - a.root.length)[0];
  if (best !== undefined && best.level !== 'DO_NOT_TRUST') return undefined;
  return (
    `Qwen Code's folder trust is on and ${dir} is not trusted (${rulesPath}), so the daemon's sessions ignore ` +
    `${project} and the aep-steer hooks in it: trust the folder (run \`qwen\` there once and choose "Trust folder", ` +
    `or add "${dir}": "TRUST_FOLDER" to ${rulesPath}), or install the hooks for the user instead ` +
    '(`aep-steer install qwen-code --user`)'
  );
}
