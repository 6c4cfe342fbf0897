// Claude Code's model credentials: ANTHROPIC_API_KEY, a token or a cloud switch, a stored login,
// or what its settings name (an `apiKeyHelper`, an `env` entry).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { home, readJson, rec, set, str, type CredentialCheck, type CredentialGap } from '../credentials.js';

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

export const claudeCredentials: CredentialCheck = { gaps: (env) => claudeGaps(env), startedAs: 'claude' };
