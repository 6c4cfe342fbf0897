// Qwen Code's model credentials: the variable its selected auth type (or model provider) names, in
// the environment, its settings or a .env file it reads.
import { dirname, join, resolve } from 'node:path';
import { dotenvHas, home, readJson, rec, set, str, type CredentialCheck, type CredentialGap } from '../credentials.js';

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

export const qwenCredentials: CredentialCheck = {
  gaps: (env, o) => qwenGaps(env, o.cwd ?? process.cwd()),
  startedAs: 'qwen',
};
