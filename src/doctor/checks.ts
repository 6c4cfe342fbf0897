// `aep-steer doctor`: each thing steering needs, checked for real (the relay answering, the token
// it accepts, the adapter on its port with the installed secret and the steering gate, the hooks
// the vendor will run, the vendor CLI's version), and for each problem the command that fixes it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { hookUrl, readSecret, secretPath } from '../adapters/install.js';
import { stateDir } from '../protocol/state-dir.js';
import { shimOutage, tracePath } from '../adapters/shim-trace.js';
import type { VendorTable } from '../adapters/table.js';
import { optionFor } from '../adapters/surface-from.js';
import { SteeringError } from '../protocol/errors.js';
import { RelayConsumer } from '../consumer/connection.js';
import { isLoopbackUrl, localTokenPath, tokenFor, tokenHint } from '../relay/local-token.js';
import { defaultSigningKeyPath } from '../relay/signing-key.js';
import { adapterKeyPath } from '../protocol/key-file.js';
import { installScript, onPath, pathLine, pinnedBinDir, pinnedCli } from './vendor-clis.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to run or change; present exactly when the check failed. */
  fix?: string;
}

const pass = (name: string, detail: string): Check => ({ name, ok: true, detail });
const fail = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix });

/** Relay reachable, then token accepted (two checks: they have different fixes). */
export async function relayChecks(url: string, given: string | undefined, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const token = tokenFor(url, given, env);
  const whose = given ? 'the given token' : token ? `the local token (${localTokenPath(env)})` : 'no token';
  let consumer: RelayConsumer;
  try {
    consumer = await RelayConsumer.connect({
      url,
      agent: 'aep-steer-doctor',
      timeoutMs: 3000,
      ...(token ? { token } : {}),
    });
  } catch (err) {
    if (err instanceof SteeringError && err.code === 'RELAY_UNAUTHORIZED') {
      return [pass('relay', `${url} answers`), fail('token', `the relay refused ${whose}`, tokenHint(env))];
    }
    const fix = isLoopbackUrl(url)
      ? `start it: aep-steer up --relay-port ${new URL(url).port || '8787'}`
      : 'check the relay URL (--relay or AEP_RELAY) and that the relay runs';
    return [fail('relay', (err as Error).message, fix), fail('token', 'not checked: no relay', 'fix the relay first')];
  }
  await consumer.close();
  if (token === undefined) {
    // A relay that takes a connection without any token has none: it is watch-only (README).
    return [
      pass('relay', `${url} answers`),
      fail(
        'token',
        'the relay asked for no token, so it is watch-only and refuses every instruction',
        'restart the relay without --no-token (it then creates the local token)',
      ),
    ];
  }
  return [pass('relay', `${url} answers`), pass('token', `accepted: ${whose}`)];
}

/** D21: the state directory and the secrets in it are private; D47: so are the signing keys. */
export function stateChecks(env: NodeJS.ProcessEnv): Check[] {
  const dir = stateDir(env);
  if (!existsSync(dir)) return [pass('state', `${dir} not created yet (the relay and install create it)`)];
  const files = [secretPath(env), localTokenPath(env), adapterKeyPath(env), defaultSigningKeyPath(env)];
  const loose = [dir, ...files].filter((p) => existsSync(p) && (statSync(p).mode & 0o077) !== 0);
  if (loose.length > 0) {
    const looseFiles = loose.filter((p) => p !== dir);
    const fixes = [
      ...(loose.includes(dir) ? [`chmod 700 ${dir}`] : []),
      ...(looseFiles.length > 0 ? [`chmod 600 ${looseFiles.join(' ')}`] : []),
    ];
    return [fail('state', `readable by others: ${loose.join(', ')}`, fixes.join(' && '))];
  }
  const keys = [adapterKeyPath(env), defaultSigningKeyPath(env)].filter((p) => existsSync(p)).length;
  return [
    pass(
      'state',
      `${dir} is private (700, secrets 600${keys > 0 ? `, ${keys === 1 ? 'its signing key' : 'both signing keys'} 600` : ''})`,
    ),
  ];
}

function getJson(
  url: string,
  timeoutMs: number,
): Promise<{ status: number; body: unknown } | { error: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error }));
    req.end();
  });
}

/** The adapter on its port, holding the installed secret, with the steering gate on (D5). */
/** A user-plane vendor steers with send_input, switched on by its control gate (D28, D29). */
const gateEnvOf = (table: VendorTable): string =>
  table.steering === 'send_input' ? `${optionFor(table, 'gate')?.env ?? 'AEP_INSTRUCT'}=1` : 'AEP_INSTRUCT=1';
// `up` runs it in the background with its output in the state dir's logs, never over a TUI.
const startCommand = (table: VendorTable): string => `${gateEnvOf(table)} aep-steer up ${table.token}`;

export async function adapterChecks(table: VendorTable, port: number, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const userPlane = table.steering === 'send_input';
  const gateEnv = gateEnvOf(table);
  const start = startCommand(table);
  const secret = readSecret(env);
  if (secret === undefined)
    return [fail('adapter', `no hook secret in ${secretPath(env)}`, `aep-steer install ${table.token}, then ${start}`)];
  const r = await getJson(hookUrl(port, secret), 2000);
  if ('error' in r) {
    const detail =
      r.error.code === 'ECONNREFUSED'
        ? `nothing listening on 127.0.0.1:${port}`
        : `127.0.0.1:${port}: ${r.error.message}`;
    return [
      fail('adapter', detail, start),
      fail('steering gate', 'not checked: no adapter', 'start the adapter first'),
    ];
  }
  if (r.status === 404) {
    return [
      fail(
        'adapter',
        `127.0.0.1:${port} does not hold the secret in ${secretPath(env)} (another adapter, or started with --secret)`,
        `stop it and run ${start}`,
      ),
      fail('steering gate', 'not checked', 'fix the adapter first'),
    ];
  }
  const status = (r.body ?? {}) as { vendor?: unknown; instruct?: unknown; sendInput?: unknown; sessions?: unknown };
  if (r.status !== 200 || status.vendor !== table.token) {
    return [
      fail(
        'adapter',
        `127.0.0.1:${port} is not a ${table.token} adapter (HTTP ${r.status}, vendor ${String(status.vendor)})`,
        `free the port, then ${start}`,
      ),
      fail('steering gate', 'not checked', 'fix the adapter first'),
    ];
  }
  const sessions =
    typeof status.sessions === 'number' ? `, ${status.sessions} session${status.sessions === 1 ? '' : 's'}` : '';
  return [
    pass('adapter', `${table.token} adapter on 127.0.0.1:${port} with the installed secret${sessions}`),
    userPlane
      ? status.sendInput === true
        ? pass('steering gate', `x.${table.token}.control.send_input accepted (${gateEnv})`)
        : fail(
            'steering gate',
            `the adapter runs without ${gateEnv}, so it refuses send_input (D29)`,
            `restart it: aep-steer down ${table.token} && ${start}`,
          )
      : status.instruct === true
        ? pass('steering gate', `x.${table.token}.control.instruct accepted (AEP_INSTRUCT=1)`)
        : fail(
            'steering gate',
            'the adapter runs without AEP_INSTRUCT=1, so it refuses instructions (D5)',
            `restart it: aep-steer down ${table.token} && ${start}`,
          ),
  ];
}

/** A hook URL; the secret segment is absent where the shim reads it from the state directory (D21). */
const URL_IN_TEXT = /http:\/\/127\.0\.0\.1:(\d+)\/hook\/([A-Za-z0-9_-]*)/g;
const SHIM_IN_TEXT = /(\/[^\s'"]*aep-steer-hook\.sh)/g;

/** The hooks the vendor will run: present, pointing at this port with this secret, the shim on disk. */
export function hookChecks(
  table: VendorTable,
  port: number,
  opts: { project?: string },
  env: NodeJS.ProcessEnv,
): Check[] {
  const installer = table.installer;
  if (table.source !== undefined)
    return [
      pass(
        'hooks',
        `${table.token} is observed over its own server (${optionFor(table, 'source-url')?.env ?? 'its URL'}), not through hooks`,
      ),
    ];
  if (installer === undefined) return [pass('hooks', `${table.token} has no installer; wire its hooks by hand`)];
  const where = opts.project === undefined ? {} : { project: opts.project };
  const install = `aep-steer install ${table.token}${opts.project === undefined ? '' : ` --project ${opts.project}`}`;
  const file = installer.file(where, env);
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const urls = [...text.matchAll(URL_IN_TEXT)];
  const shims = [...new Set([...text.matchAll(SHIM_IN_TEXT)].map((m) => m[1]!))];
  if (urls.length === 0 && shims.length === 0) return [fail('hooks', `no adapter hooks in ${file}`, install)];
  const missing = shims.filter((s) => !existsSync(s));
  if (missing.length > 0)
    return [fail('hooks', `the hooks run ${missing[0]}, which is gone (moved or reinstalled package)`, install)];
  const secret = readSecret(env);
  const stale = urls.filter((m) => Number(m[1]) !== port || (m[2] !== '' && m[2] !== secret));
  if (stale.length > 0) {
    const m = stale[0]!;
    const why =
      Number(m[1]) !== port ? `port ${m[1]}, the adapter's is ${port}` : 'a secret that is not the stored one';
    return [fail('hooks', `${stale.length} of ${urls.length} hooks in ${file} use ${why}`, install)];
  }
  return [
    pass(
      'hooks',
      `${Math.max(urls.length, shims.length)} hook entries in ${file} point at 127.0.0.1:${port} with the stored secret`,
    ),
  ];
}

/**
 * What the shims left when they failed open (adapters/shim-trace.ts): a problem while the last hook
 * could not reach the adapter; nothing to say (no check) when no hook ever failed.
 */
export function shimTraceChecks(table: VendorTable, env: NodeJS.ProcessEnv): Check[] {
  const dir = stateDir(env);
  const { failed, current } = shimOutage(dir);
  if (failed.length === 0) return [];
  const file = tracePath(dir);
  if (current === undefined) {
    const last = failed.at(-1)!;
    const count = `${failed.length} hook${failed.length === 1 ? '' : 's'}`;
    const since = 'every hook since reached the adapter';
    return [pass('hook trace', `${count} failed open before, the last at ${last.time}; ${since} (${file})`)];
  }
  const start = startCommand(table);
  const fix = /http=404/.test(current.outcome)
    ? `aep-steer install ${table.token}, then restart the adapter: ${start}`
    : /curl=7|no adapter/.test(`${current.outcome} ${current.why}`)
      ? `start the adapter: ${start}`
      : `check the adapter's stderr; the failed hooks are in ${file}`;
  const detail =
    `the agent's last hook (${current.time}) could not reach the adapter on ${current.where} ` +
    `and got the neutral reply: ${current.why}; ${failed.length} failed in ${file}`;
  return [fail('hook trace', detail, fix)];
}

/** The PATH line as a shell takes it pasted, with where to keep it after a `#`. */
const keepLine = (dir: string): string =>
  `${pathLine(dir)}   # and the same line in ~/.bashrc (or ~/.profile) to keep it in new terminals`;

/** What `bin --version` printed (its x.y.z), or why it did not run. */
function versionOf(bin: string, env: NodeJS.ProcessEnv): { version?: string; error?: string } {
  const r = spawnSync(bin, ['--version'], { env, encoding: 'utf8', timeout: 15_000 });
  if (r.error !== undefined || r.status !== 0) return { error: r.error?.message ?? `exit ${r.status}` };
  const version = /\d+\.\d+\.\d+/.exec(`${r.stdout}${r.stderr}`)?.[0];
  return version === undefined ? {} : { version };
}

/**
 * The vendor CLI: `bin` when given, else its name on PATH, else the pinned one in this clone's
 * .vendor-clis/ (scripts/install-vendor-cli.sh), checked against the version the table was
 * observed on. A pinned CLI off PATH is a problem whose fix is the exact PATH line.
 */
export function cliCheck(table: VendorTable, bin: string | undefined, env: NodeJS.ProcessEnv): Check {
  const cli = table.cli;
  const name = bin ?? cli?.bin;
  if (name === undefined || cli === undefined) return pass('vendor CLI', `${table.token}: no CLI to check`);
  const want = table.version;
  const observed = `the version the ${table.token} table was observed on`;
  const script = installScript(table.token);
  const pinnedDir = pinnedBinDir(table.token, env);
  const pinnedPath = join(pinnedDir, cli.bin);
  const install = script === undefined ? cli.install : `${script} ${table.token}`;
  const mismatch = (who: string, v: { version?: string; error?: string }) =>
    v.error !== undefined
      ? `${who} failed to run (${v.error})`
      : `${who} is ${v.version ?? '(no version)'}; the ${table.token} table was observed on ${want}, and other versions may place context differently`;

  if (bin !== undefined) {
    const v = versionOf(bin, env);
    if (v.version === want) return pass('vendor CLI', `${bin} ${want}, ${observed}`);
    const fix = script === undefined ? install : `${install}, then --cli ${pinnedPath}`;
    if (v.error !== undefined) return fail('vendor CLI', `${bin} not found or failed (${v.error})`, fix);
    return fail('vendor CLI', mismatch(bin, v), fix);
  }

  const found = onPath(cli.bin, env);
  const pinned = pinnedCli(table.token, cli.bin, env);
  const pinnedGood = pinned !== undefined && versionOf(pinned, env).version === want;
  // With the pinned one installed, the fix is the PATH line; without it, install it first.
  const installFix = script === undefined ? install : `${install}, then ${pathLine(pinnedDir)}`;
  if (found !== undefined) {
    const v = versionOf(found, env);
    if (v.version === want) return pass('vendor CLI', `${cli.bin} ${want} (${found}), ${observed}`);
    if (pinnedGood)
      return fail(
        'vendor CLI',
        `${mismatch(found, v)}; the pinned ${want} in ${pinnedDir} is not first on PATH`,
        keepLine(pinnedDir),
      );
    return fail('vendor CLI', mismatch(found, v), installFix);
  }
  if (pinnedGood)
    return fail(
      'vendor CLI',
      `${cli.bin} is not on PATH; the pinned ${cli.bin} ${want} is in ${pinnedDir}`,
      keepLine(pinnedDir),
    );
  if (pinned !== undefined)
    return fail('vendor CLI', `${cli.bin} is not on PATH, and ${mismatch(pinned, versionOf(pinned, env))}`, installFix);
  return fail(
    'vendor CLI',
    script === undefined ? `${cli.bin} is not on PATH` : `${cli.bin} is not on PATH, nor installed in ${pinnedDir}`,
    installFix,
  );
}
