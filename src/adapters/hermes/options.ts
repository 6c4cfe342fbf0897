// The flags only the Hermes adapter takes (D16): its opt-in pre_tool_call gate (D13).
import type { VendorOption } from '../table.js';

export const hermesOptions: readonly VendorOption[] = [
  { flag: '--control', env: 'AEP_HERMES_CONTROL', sets: 'gate', help: 'hold pre_tool_call for an answer (D13)' },
  {
    flag: '--gate-tools <regex>',
    env: 'AEP_HERMES_GATE_TOOLS',
    sets: 'gate-tools',
    help: 'hold only tools whose whole name matches; every tool when unset',
  },
];
