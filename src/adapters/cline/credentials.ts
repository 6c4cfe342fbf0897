// Cline's model credentials: the provider `cline auth` stored.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { home, type CredentialCheck, type CredentialGap } from '../credentials.js';

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

export const clineCredentials: CredentialCheck = { gaps: (env) => clineGaps(env), startedAs: 'cline' };
