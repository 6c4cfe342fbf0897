// The flags only the Cline adapter takes (D16): the hub beside its hooks, two trust grants (D28),
// and where the hub is when its discovery record will not do (hub/endpoint.ts reads them).
import type { VendorOption } from '../table.js';

export const clineOptions: readonly VendorOption[] = [
  {
    flag: '--hub',
    env: 'AEP_CLINE_HUB',
    sets: 'user-plane',
    help: 'connect to the Cline hub, observe-only; hooks work without it',
  },
  {
    flag: '--hub-control',
    env: 'AEP_CLINE_HUB_CONTROL',
    sets: 'user-plane-control',
    help: 'also accept send_input, control.cancel and approval answers over the hub (D28)',
  },
  {
    flag: '--hub-url <url>',
    env: 'AEP_CLINE_HUB_URL',
    sets: 'user-plane-env',
    help: 'the hub WebSocket instead of its discovery record; needs --hub-token',
  },
  { flag: '--hub-token <t>', env: 'AEP_CLINE_HUB_TOKEN', sets: 'user-plane-env', help: "the hub's authToken" },
];
