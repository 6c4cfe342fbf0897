// The flags only the OpenHands bridge takes (D16): the agent server it observes, and the one gate
// for its writes (D29).
import type { VendorOption } from '../table.js';

export const openhandsOptions: readonly VendorOption[] = [
  {
    flag: '--control',
    env: 'AEP_OPENHANDS_CONTROL',
    sets: 'gate',
    help: 'send_input, respond, pause, resume and interrupt over REST (D29)',
  },
  {
    flag: '--server <url>',
    env: 'AEP_OPENHANDS_URL',
    sets: 'source-url',
    default: 'http://127.0.0.1:8000',
    help: 'the agent server to observe',
  },
  {
    flag: '--server-key <key>',
    env: 'AEP_OPENHANDS_KEY',
    sets: 'source-key',
    help: "the server's session API key, one of its OH_SESSION_API_KEYS_*",
  },
  {
    flag: '--poll <seconds>',
    env: 'AEP_OPENHANDS_POLL',
    sets: 'source-poll',
    default: '15',
    help: 'conversation discovery interval',
  },
  { flag: '--deltas', env: 'AEP_OPENHANDS_DELTAS', sets: 'source-deltas', help: 'map streaming deltas too' },
];
