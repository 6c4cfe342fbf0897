// The flags only the opencode adapter takes (D16, D50): the `opencode serve` server it follows,
// the file holding that server's password, and how often running turns are checked.
import type { VendorOption } from '../table.js';

export const opencodeOptions: readonly VendorOption[] = [
  {
    flag: '--serve <url>',
    env: 'AEP_OPENCODE_URL',
    sets: 'source-url',
    default: 'http://127.0.0.1:4096',
    help: 'the `opencode serve` server whose sessions it follows and steers (D50)',
  },
  {
    flag: '--serve-password-file <path>',
    env: 'AEP_OPENCODE_PASSWORD_FILE',
    sets: 'source-key',
    help: "the mode-600 file holding the server's OPENCODE_SERVER_PASSWORD (user AEP_OPENCODE_USERNAME, default opencode)",
  },
  {
    flag: '--serve-poll <seconds>',
    env: 'AEP_OPENCODE_POLL',
    sets: 'source-poll',
    default: '0.5',
    help: 'how often a running turn is checked for its end besides each step',
  },
];
