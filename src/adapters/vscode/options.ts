// The flags only the VS Code adapter takes (D16): its opt-in PreToolUse gate (D13).
import { gateOptions } from '../gate-options.js';

export const vscodeOptions = gateOptions('AEP_VSCODE', 'PreToolUse');
