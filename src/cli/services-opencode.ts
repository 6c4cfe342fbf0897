// `up opencode`: the `opencode serve` server the adapter follows, started by `up` in this folder
// (its password in a mode-600 file in the state dir) or, with `--serve URL`, the person's own,
// attached to and never started or stopped.
import { join } from 'node:path';
import { isRunning, readRecord } from '../services/records.js';
import { portFree } from '../services/port-holder.js';
import { stateDir } from '../protocol/state-dir.js';
import { readTokenFile } from '../protocol/secret.js';
import { ensureServeToken } from '../adapters/qwen-code/serve/daemon.js';
import {
  OPENCODE_DAEMON,
  OPENCODE_SERVE_PORT,
  opencodeAnswers,
  opencodeBinary,
  opencodeServeCommand,
} from '../adapters/opencode/daemon.js';
import { HOST, SERVE_VENDOR, invalid, portNumber, type Planned, type UpFlags } from './services-base.js';

export const OPENCODE = 'opencode';

/** The server the adapter follows: its URL, its password file, and the service name `up` says. */
interface OpencodeLane {
  url: string;
  tokenFile?: string;
  name: string;
}

/** Where the adapter's `--serve` points and the password file it reads; a server `up` starts, or none. */
export async function opencodePlan(
  f: UpFlags,
  vendors: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ daemon?: Planned; attach?: OpencodeLane; lane: OpencodeLane } | undefined> {
  if (!vendors.includes(OPENCODE)) return undefined;
  const serveFlags = f.serve !== undefined || f.servePort !== undefined || f.serveTokenFile !== undefined;
  if (serveFlags && vendors.includes(SERVE_VENDOR))
    throw invalid(
      `--serve, --serve-port and --serve-token-file name one vendor's server: run \`aep-steer up ${SERVE_VENDOR} --serve\` and \`aep-steer up ${OPENCODE}\` apart`,
    );
  if (typeof f.serve === 'string') {
    try {
      const u = new URL(f.serve);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw invalid(
        `--serve URL must be the opencode server's http(s) URL, e.g. http://127.0.0.1:4096, got "${f.serve}"`,
      );
    }
    if (f.servePort !== undefined)
      throw invalid('--serve-port starts an opencode server; with --serve URL, up attaches to that one');
    if (f.serveTokenFile !== undefined) readTokenFile(f.serveTokenFile);
    const file = f.serveTokenFile === undefined ? {} : { tokenFile: f.serveTokenFile };
    const lane = { url: f.serve, ...file, name: OPENCODE_DAEMON };
    return { attach: lane, lane };
  }
  const port = portNumber(
    '--serve-port (AEP_OPENCODE_SERVE_PORT)',
    f.servePort ?? (env.AEP_OPENCODE_SERVE_PORT || String(OPENCODE_SERVE_PORT)),
  );
  const url = `http://${HOST}:${port}`;
  const passwordFile = f.serveTokenFile ?? join(stateDir(env), `${OPENCODE_DAEMON}.password`);
  const at = { url, tokenFile: passwordFile, name: OPENCODE_DAEMON };
  const running = readRecord(OPENCODE_DAEMON, env);
  if (running !== undefined && isRunning(running) && running.url !== undefined) {
    if (running.port !== port)
      throw invalid(
        `the opencode server up started runs on port ${running.port} (pid ${running.pid}); \`aep-steer down ${OPENCODE_DAEMON}\` first to move it to ${port}`,
      );
    const file = running.tokenFile ?? passwordFile;
    return {
      daemon: planned(running.argv, env, port, url, file, running.cwd ?? process.cwd()),
      lane: { ...at, tokenFile: file },
    };
  }
  const { token: password } = ensureServeToken(passwordFile);
  // A server already answering there with this password (one up lost the record of) is attached to.
  if (!(await portFree(port, HOST)) && (await opencodeAnswers(url, password))) return { attach: at, lane: at };
  const bin = opencodeBinary(env);
  if (bin === undefined)
    throw invalid(
      'up opencode runs `opencode serve`, and no opencode binary is on PATH: install opencode 1.18.33 ' +
        '(`npm install -g opencode-ai@1.18.33`), set AEP_OPENCODE_BIN=/path/to/opencode, or attach to a running ' +
        'server with --serve URL',
    );
  const cmd = opencodeServeCommand(bin, port, password, env);
  return { daemon: planned(cmd.argv, cmd.env, port, url, passwordFile, process.cwd()), lane: at };
}

function planned(
  argv: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  url: string,
  passwordFile: string,
  cwd: string,
): Planned {
  return {
    name: OPENCODE_DAEMON,
    port,
    args: [],
    command: { argv, env, cwd, url, tokenFile: passwordFile },
    daemon: true,
    what: 'opencode serve port',
    flag: '--serve-port (or --serve URL to attach to the server there)',
    ready: async () => opencodeAnswers(url, readTokenFile(passwordFile)),
  };
}
