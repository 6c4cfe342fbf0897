// `up qwen-code --serve`: the `qwen serve` daemon the serve lane attaches to, started by `up` (its
// token in a mode-600 file) or attached to where one already answers.
import { join } from 'node:path';
import { isRunning, readRecord } from '../services/records.js';
import { portFree } from '../services/port-holder.js';
import { stateDir } from '../protocol/state-dir.js';
import { readTokenFile } from '../protocol/secret.js';
import {
  ensureServeToken,
  QWEN_SERVE_PORT,
  qwenBinary,
  qwenServeCommand,
  serveAnswers,
} from '../adapters/qwen-code/serve/daemon.js';
import { DAEMON, HOST, SERVE_VENDOR, invalid, portNumber, type Planned, type UpFlags } from './services-base.js';

/** What `--serve` asks for: the daemon's URL and token file, and whether `up` starts it. */
export async function servePlan(
  f: UpFlags,
  vendors: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ daemon?: Planned; attach?: { url: string; tokenFile?: string } } | undefined> {
  // `up opencode` takes the same flags for its own server (services-opencode.ts).
  if (!vendors.includes(SERVE_VENDOR) && vendors.includes('opencode')) return undefined;
  if (f.serve === undefined || f.serve === false) {
    if (f.servePort !== undefined || f.serveTokenFile !== undefined)
      throw invalid(`--serve-port and --serve-token-file go with --serve: \`aep-steer up ${SERVE_VENDOR} --serve\``);
    return undefined;
  }
  if (!vendors.includes(SERVE_VENDOR))
    throw invalid(
      `--serve starts the \`qwen serve\` daemon of ${SERVE_VENDOR}'s serve lane: \`aep-steer up ${SERVE_VENDOR} --serve\``,
    );
  if (typeof f.serve === 'string') {
    // The person's own daemon: attached, never started or stopped by up.
    try {
      const u = new URL(f.serve);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw invalid(`--serve URL must be the daemon's http(s) URL, e.g. http://127.0.0.1:4170, got "${f.serve}"`);
    }
    if (f.servePort !== undefined)
      throw invalid('--serve-port starts a daemon; with --serve URL, up attaches to that one');
    if (f.serveTokenFile !== undefined) readTokenFile(f.serveTokenFile);
    return { attach: { url: f.serve, ...(f.serveTokenFile === undefined ? {} : { tokenFile: f.serveTokenFile }) } };
  }
  const port = portNumber('--serve-port', f.servePort ?? String(QWEN_SERVE_PORT));
  const url = `http://${HOST}:${port}`;
  const tokenFile = f.serveTokenFile ?? join(stateDir(env), 'qwen-serve.token');
  const running = readRecord(DAEMON, env);
  if (running !== undefined && isRunning(running) && running.url !== undefined) {
    if (running.port !== port)
      throw invalid(
        `the qwen serve daemon up started runs on port ${running.port} (pid ${running.pid}); \`aep-steer down ${DAEMON}\` first to move it to ${port}`,
      );
    return {
      daemon: daemonPlanned(running.argv, env, port, url, running.tokenFile ?? tokenFile, running.cwd ?? process.cwd()),
    };
  }
  const { token } = ensureServeToken(tokenFile);
  // A daemon already answering there with this token (the person's, or one up lost the record of) is attached to.
  if (!(await portFree(port, HOST)) && (await serveAnswers(url, token))) return { attach: { url, tokenFile } };
  const bin = qwenBinary(env);
  if (bin === undefined)
    throw invalid(
      '--serve runs `qwen serve`, and no qwen binary is on PATH: install Qwen Code 0.24.4 ' +
        '(`npm install -g @qwen-code/qwen-code@0.24.4`) or set AEP_QWEN_BIN=/path/to/qwen',
    );
  const cmd = qwenServeCommand(bin, port, token, env);
  return { daemon: daemonPlanned(cmd.argv, cmd.env, port, url, tokenFile, process.cwd()) };
}

function daemonPlanned(
  argv: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  url: string,
  tokenFile: string,
  cwd: string,
): Planned {
  return {
    name: DAEMON,
    port,
    args: [],
    command: { argv, env, cwd, url, tokenFile },
    daemon: true,
    what: 'qwen serve port',
    flag: '--serve-port (or --serve URL to attach to the daemon there)',
    ready: async () => serveAnswers(url, readTokenFile(tokenFile)),
  };
}
