// The flags of an opt-in held tool gate (D13) as Hermes and the VS Code agent take them: one that
// switches the gate on, one that narrows it to the tools a regex names. A vendor's differences are
// data: its variables' prefix and the moment its gate holds.
import type { VendorOption } from './table.js';

export const gateOptions = (envPrefix: string, moment: string): readonly VendorOption[] => [
  { flag: '--control', env: `${envPrefix}_CONTROL`, sets: 'gate', help: `hold ${moment} for an answer (D13)` },
  {
    flag: '--gate-tools <regex>',
    env: `${envPrefix}_GATE_TOOLS`,
    sets: 'gate-tools',
    help: 'hold only tools whose whole name matches; every tool when unset',
  },
];
