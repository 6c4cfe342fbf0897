// The flags only the VS Code adapter takes (D16): its opt-in PreToolUse gate (D13).
import type { VendorOption } from '../table.js';

export const vscodeOptions: readonly VendorOption[] = [
  { flag: '--control', env: 'AEP_VSCODE_CONTROL', sets: 'gate', help: 'hold PreToolUse for an answer (D13)' },
  {
    flag: '--gate-tools <regex>',
    env: 'AEP_VSCODE_GATE_TOOLS',
    sets: 'gate-tools',
    help: 'hold only tools whose whole name matches; every tool when unset',
  },
];
