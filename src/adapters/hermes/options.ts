// The flags only the Hermes adapter takes (D16): its opt-in pre_tool_call gate (D13).
import { gateOptions } from '../gate-options.js';

export const hermesOptions = gateOptions('AEP_HERMES', 'pre_tool_call');
