// Whether a vendor's CLI would find its model credentials in an environment, read the way each
// pinned CLI looks for them (vendor-clis-observed §1.2, §2.2, §3.2, §4.1; their own messages):
// Codex reads the key from the variable its model provider's `env_key` names (config.toml), or
// OPENAI_API_KEY / `codex login` for OpenAI itself; Claude Code from ANTHROPIC_API_KEY, a token or
// a stored login; Qwen Code from the variable its selected auth type (or model provider) names,
// the settings or a .env file; Cline from what `cline auth` stored. Nothing here is sent anywhere
// or printed: only the names of what is missing.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export interface CredentialGap {
  /** What the CLI will lack, named (`MOCK_API_KEY, which codex's model provider "mock" reads`). */
  missing: string;
  /** What the person does about it, where the CLI runs (the caller says where that is). */
  fix: string;
  /** True when the CLI fails for certain without it (an `env_key` unset), not only probably. */
  certain: boolean;
}

const home = (env: NodeJS.ProcessEnv): string => env.HOME || homedir();
const set = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name] ?? '').trim() !== '';

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

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

function claudeGaps(env: NodeJS.ProcessEnv): CredentialGap[] {
  const vars = [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CODE_USE_BEDROCK',
    'CLAUDE_CODE_USE_VERTEX',
    'CLAUDE_CODE_USE_FOUNDRY',
  ];
  if (vars.some((v) => set(env, v))) return [];
  const dir = env.CLAUDE_CONFIG_DIR || join(home(env), '.claude');
  if (existsSync(join(dir, '.credentials.json'))) return [];
  const settings = readJson(join(dir, 'settings.json'));
  const settingsEnv = rec(settings?.env);
  if (str(settings?.apiKeyHelper) !== undefined || vars.some((v) => str(settingsEnv?.[v]) !== undefined)) return [];
  const state = readJson(env.CLAUDE_CONFIG_DIR ? join(dir, '.claude.json') : join(home(env), '.claude.json'));
  if (str(state?.primaryApiKey) !== undefined) return [];
  return [
    {
      missing: `Claude Code credentials: ANTHROPIC_API_KEY is not set and no login is stored (${join(dir, '.credentials.json')})`,
      fix: 'run `claude` once and log in (/login), or export ANTHROPIC_API_KEY',
      certain: false,
    },
  ];
}

/** `KEY=` in a dotenv file. */
const dotenvHas = (file: string, key: string): boolean => {
  try {
    return new RegExp(`^\\s*(export\\s+)?${key}\\s*=\\s*\\S`, 'm').test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
};

/** The .env files Qwen Code reads (project `.qwen/.env` or `.env` up from the directory, then the home's). */
function qwenDotenvFiles(cwd: string, qwenDir: string, homeDir: string): string[] {
  const files: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    files.push(join(dir, '.qwen', '.env'), join(dir, '.env'));
    if (dir === dirname(dir) || dir === homeDir) break;
  }
  return [...files, join(qwenDir, '.env'), join(homeDir, '.env')];
}

const QWEN_KEYS: Record<string, string> = {
  openai: 'OPENAI_API_KEY',
  'openai-responses': 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
  'vertex-ai': 'GOOGLE_API_KEY',
};

function qwenGaps(env: NodeJS.ProcessEnv, cwd: string): CredentialGap[] {
  const qwenDir = env.QWEN_HOME || join(home(env), '.qwen');
  const settingsPath = join(qwenDir, 'settings.json');
  const settings = readJson(settingsPath);
  const auth = rec(rec(settings?.security)?.auth);
  const selected = str(auth?.selectedType);
  if (selected === undefined) {
    // Headless Qwen Code takes OpenAI-compatible settings from the environment alone.
    if (set(env, 'OPENAI_API_KEY')) return [];
    return [
      {
        missing: `an auth type for Qwen Code: security.auth.selectedType is not set in ${settingsPath} and OPENAI_API_KEY is not set`,
        fix: 'run `qwen` once and choose a provider with /auth, or export OPENAI_API_KEY (with OPENAI_BASE_URL and OPENAI_MODEL)',
        certain: false,
      },
    ];
  }
  if (selected === 'qwen-oauth')
    return [
      {
        missing: 'a model provider for Qwen Code: its selected "qwen-oauth" free tier was discontinued',
        fix: 'run `qwen` once and choose another provider with /auth',
        certain: false,
      },
    ];
  const model = str(rec(settings?.model)?.name);
  const providers = rec(settings?.modelProviders)?.[selected];
  const entry = Array.isArray(providers)
    ? (providers as unknown[]).map(rec).find((p) => p !== undefined && model !== undefined && p.id === model)
    : undefined;
  const explicit = str(entry?.envKey);
  const key = explicit ?? QWEN_KEYS[selected];
  if (key === undefined) return [];
  const settingsEnv = rec(settings?.env);
  if (set(env, key) || str(settingsEnv?.[key]) !== undefined) return [];
  if (explicit === undefined && str(auth?.apiKey) !== undefined) return [];
  if (qwenDotenvFiles(cwd, qwenDir, home(env)).some((f) => dotenvHas(f, key))) return [];
  return [
    {
      missing: `${key}, which Qwen Code's "${selected}" auth${explicit === undefined ? '' : ` (model ${model})`} reads its key from (${settingsPath})`,
      fix: `export ${key}=<your key>, or put it in ${join(qwenDir, '.env')}`,
      certain: explicit !== undefined,
    },
  ];
}

function clineGaps(env: NodeJS.ProcessEnv): CredentialGap[] {
  const data = env.CLINE_DATA_DIR || join(env.CLINE_DIR || join(home(env), '.cline'), 'data');
  const file = join(data, 'settings', 'providers.json');
  if (existsSync(file)) return [];
  return [
    {
      missing: `a Cline model provider: \`cline auth\` stored none (${file})`,
      fix: 'run `cline auth` once (for example `cline auth -p openai-compatible -k <key> -b <url> -m <model>`)',
      certain: false,
    },
  ];
}

/**
 * What the vendor's CLI would lack in `env` to reach its model; empty when nothing is missing or
 * the vendor's CLI has no credentials of its own to check. `args` are the CLI's own arguments
 * (a Codex `--profile` or `-c model_provider=…`), `cwd` where it runs (Qwen's .env files).
 */
export function credentialGaps(
  vendor: string,
  env: NodeJS.ProcessEnv,
  o: { args?: readonly string[]; cwd?: string } = {},
): CredentialGap[] {
  switch (vendor) {
    case 'codex':
      return codexGaps(env, o.args ?? []);
    case 'claude-code':
      return claudeGaps(env);
    case 'qwen-code':
      return qwenGaps(env, o.cwd ?? process.cwd());
    case 'cline':
      return clineGaps(env);
    default:
      return [];
  }
}
