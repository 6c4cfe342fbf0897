// The flags only the Qwen Code adapter takes (D16): the `qwen serve` daemon its serve lane
// attaches to (D30).
import type { VendorOption } from '../table.js';

export const qwenCodeOptions: readonly VendorOption[] = [
  {
    flag: '--serve <url>',
    env: 'AEP_QWEN_SERVE_URL',
    sets: 'lane-url',
    help: 'also steer the sessions a `qwen serve` daemon hosts, e.g. http://127.0.0.1:4170 (D30)',
  },
  {
    flag: '--serve-token-file <path>',
    env: 'AEP_QWEN_SERVE_TOKEN_FILE',
    sets: 'lane-token-file',
    help: "the mode-600 file holding the daemon's --token / QWEN_SERVER_TOKEN",
  },
];
