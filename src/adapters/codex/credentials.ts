// Codex's model credentials, read as codex 0.171.0 looks for them: the variable its model
// provider's `env_key` names (config.toml, a `--profile`, a `-c model_provider=` override), or
// OPENAI_API_KEY / `codex login` for OpenAI itself.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { home, set, str, type CredentialCheck, type CredentialGap } from '../credentials.js';

type Toml = Record<string, Record<string, string | boolean>>;

/**
 * The string and boolean keys of a TOML file by table (`""` the top level, `model_providers.mock`,
 * `profiles.work`): enough to find a model provider and its `env_key`. Anything else is skipped.
 */
function readTomlTables(text: string): Toml {
  const out: Toml = { '': {} };
  let table = '';
  const unquote = (k: string) =>
    k
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .replace(/^'(.*)'$/, '$1');
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[([^[\]]+)\]\s*(#.*)?$/.exec(line);
    if (header !== null) {
      table = header[1]!.split('.').map(unquote).join('.');
      out[table] ??= {};
      continue;
    }
    const kv = /^("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
    if (kv === null) continue;
    const value = kv[2]!.trim();
    const str = /^"((?:[^"\\]|\\.)*)"|^'([^']*)'/.exec(value);
    out[table] ??= {};
    const t = out[table]!;
    if (str !== null) t[unquote(kv[1]!)] = str[1] ?? str[2] ?? '';
    else if (/^(true|false)\b/.test(value)) t[unquote(kv[1]!)] = value.startsWith('true');
  }
  return out;
}

/** The value a `codex` command line gives a flag (`-p X`, `--profile=X`, `-c key=value`). */
function flagValues(args: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = names.find((n) => n.startsWith('--') && a.startsWith(`${n}=`));
    if (eq !== undefined) out.push(a.slice(eq.length + 1));
    else if (names.includes(a) && i + 1 < args.length) out.push(args[++i]!);
  }
  return out;
}

function codexGaps(env: NodeJS.ProcessEnv, args: readonly string[]): CredentialGap[] {
  if (args.includes('--oss')) return [];
  const codexHome = env.CODEX_HOME || join(home(env), '.codex');
  const configPath = join(codexHome, 'config.toml');
  let toml: Toml = { '': {} };
  try {
    toml = readTomlTables(readFileSync(configPath, 'utf8'));
  } catch {
    /* no config: OpenAI itself */
  }
  const overrides = flagValues(args, ['-c', '--config'])
    .map((kv) => /^model_provider\s*=\s*"?([^"]+)"?$/.exec(kv)?.[1])
    .filter((v): v is string => v !== undefined);
  const profile = flagValues(args, ['-p', '--profile']).at(-1) ?? str(toml['']!.profile);
  const provider =
    overrides.at(-1) ??
    (profile === undefined ? undefined : str(toml[`profiles.${profile}`]?.model_provider)) ??
    str(toml['']!.model_provider) ??
    'openai';
  const table = toml[`model_providers.${provider}`];
  const envKey = str(table?.env_key);
  if (table !== undefined && envKey !== undefined) {
    if (set(env, envKey) || str(table.experimental_bearer_token) !== undefined) return [];
    return [
      {
        missing: `${envKey}, which codex's model provider "${provider}" (${configPath}) reads its key from`,
        fix: `export ${envKey}=<your key>`,
        certain: true,
      },
    ];
  }
  if (table !== undefined && table.requires_openai_auth !== true) return [];
  if (table === undefined && provider !== 'openai') return [];
  if (set(env, 'OPENAI_API_KEY') || set(env, 'CODEX_API_KEY') || existsSync(join(codexHome, 'auth.json'))) return [];
  return [
    {
      missing: `an OpenAI login for codex: OPENAI_API_KEY is not set and \`codex login\` stored none (${join(codexHome, 'auth.json')})`,
      fix: 'run `codex login` once, or export OPENAI_API_KEY',
      certain: false,
    },
  ];
}

export const codexCredentials: CredentialCheck = {
  gaps: (env, o) => codexGaps(env, o.args ?? []),
  startedAs: 'codex (or `aep-steer run codex`)',
};
