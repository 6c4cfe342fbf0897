// Copilot CLI's model credentials, as `aep-steer run copilot` needs them: BYOK from the
// environment (COPILOT_PROVIDER_BASE_URL, with COPILOT_MODEL; the key is optional for a local
// provider), or a provider file (AEP_COPILOT_PROVIDER_FILE). A GitHub login serves the CLI itself
// but not the headless server, which takes its provider with each session (copilot-opencode-observed §1).
import { set, type CredentialCheck, type CredentialGap } from '../credentials.js';

function copilotGaps(env: NodeJS.ProcessEnv): CredentialGap[] {
  if (set(env, 'AEP_COPILOT_PROVIDER_FILE')) return [];
  if (!set(env, 'COPILOT_PROVIDER_BASE_URL'))
    return [
      {
        missing: 'a model provider for the Copilot session: COPILOT_PROVIDER_BASE_URL is not set (BYOK)',
        fix: 'export COPILOT_PROVIDER_BASE_URL (with COPILOT_PROVIDER_API_KEY and COPILOT_MODEL), or name a provider file in AEP_COPILOT_PROVIDER_FILE',
        certain: true,
      },
    ];
  if (!set(env, 'COPILOT_MODEL'))
    return [
      {
        missing: 'COPILOT_MODEL, the model the BYOK provider serves',
        fix: 'export COPILOT_MODEL=<model name>',
        certain: false,
      },
    ];
  return [];
}

export const copilotCredentials: CredentialCheck = {
  gaps: (env) => copilotGaps(env),
  startedAs: '`aep-steer run copilot`',
};
