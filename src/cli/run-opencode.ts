// `aep-steer run opencode [args…]`: the person's own opencode TUI (`opencode attach URL`) on the
// `opencode serve` server the opencode adapter follows, so every session opened in it is steered.
// Where no adapter runs yet, what `aep-steer up opencode --instruct` starts is started first (the
// relay, the adapter, and a server in this folder with its password in a mode-600 file); it keeps
// running after the TUI exits, for `aep-steer down opencode` to stop.
import { readTokenFile } from '../protocol/secret.js';
import { isRunning, readRecord } from '../services/records.js';
import { OPENCODE_DAEMON, opencodeAnswers, opencodeBinary } from '../adapters/opencode/daemon.js';
import { DEFAULT_READY_MS, adapterName } from './services-base.js';
import { OPENCODE } from './services-opencode.js';
import { up } from './services-up.js';

/** The server the running adapter follows: its `--serve` URL and `--serve-password-file`, from up's record. */
function followed(env: NodeJS.ProcessEnv): { url: string; passwordFile?: string } | undefined {
  const r = readRecord(adapterName(OPENCODE), env);
  if (r === undefined || !isRunning(r)) return undefined;
  const after = (flag: string) => {
    const i = r.argv.indexOf(flag);
    return i === -1 ? undefined : r.argv[i + 1];
  };
  const url = after('--serve') ?? readRecord(OPENCODE_DAEMON, env)?.url;
  const file = after('--serve-password-file');
  return url === undefined ? undefined : { url, ...(file === undefined ? {} : { passwordFile: file }) };
}

/**
 * The attach command for this terminal, after starting what is missing; or the exit code and the
 * sentence already written when it cannot be had.
 */
export async function opencodeAttach(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  err: NodeJS.WritableStream,
  exits: { noAdapter: number; laneFailed: number },
): Promise<{ bin: string; args: string[]; env: NodeJS.ProcessEnv } | number> {
  const bin = opencodeBinary(env);
  if (bin === undefined) {
    err.write(
      'run: no opencode binary is on PATH: install opencode 1.18.33 (`npm install -g opencode-ai@1.18.33`) or set AEP_OPENCODE_BIN=/path/to/opencode\n',
    );
    return exits.noAdapter;
  }
  let server = followed(env);
  if (server === undefined) {
    const code = await up([OPENCODE], { hookPort: [], instruct: true, timeoutMs: String(DEFAULT_READY_MS) }, env);
    server = followed(env);
    if (code !== 0 || server === undefined) {
      err.write('run: the opencode adapter and its server did not start (said above); nothing to attach to\n');
      return exits.noAdapter;
    }
  }
  let password: string | undefined;
  try {
    password = server.passwordFile === undefined ? undefined : readTokenFile(server.passwordFile);
  } catch (e) {
    err.write(`run: ${(e as Error).message}\n`);
    return exits.laneFailed;
  }
  if (password !== undefined && !(await opencodeAnswers(server.url, password, 5000))) {
    err.write(
      `run: the opencode server at ${server.url} does not answer with the password in ${server.passwordFile}; \`aep-steer status\` says what runs, \`aep-steer down opencode\` and \`aep-steer run opencode\` start it again\n`,
    );
    return exits.laneFailed;
  }
  // The password reaches the TUI through its environment, never its command line.
  const own = password === undefined ? {} : { OPENCODE_SERVER_PASSWORD: password };
  const dir = args.includes('--dir') ? [] : ['--dir', process.cwd()];
  return { bin, args: ['attach', server.url, ...dir, ...args], env: { ...env, ...own } };
}
