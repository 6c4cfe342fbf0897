// Every command's vendor argument (and `--vendor`) takes a vendor's token or its alias (its CLI's
// name: `claude`, `qwen`; src/adapters/vendors.ts holds them) and hands the command the token, so
// no command compares names itself and each command's output names the token. Applied once to the
// program (catalogue.ts), by the names the commands give their arguments and options.
import type { Command } from 'commander';
import { vendorToken } from '../adapters/vendors.js';

/** Arguments that name vendors: `install <vendor> [orchestrator]`, `up [vendors...]`, `down [services...]`. */
const VENDOR_ARGUMENTS: ReadonlySet<string> = new Set(['vendor', 'vendors', 'services', 'orchestrator']);
/** Options whose value is a vendor (`instruct --vendor claude`). */
const VENDOR_OPTIONS: ReadonlySet<string> = new Set(['--vendor']);
/** Options whose value may start with `<vendor>=` (`up --hook-port claude=18377`). */
const VENDOR_PREFIXED_OPTIONS: ReadonlySet<string> = new Set(['--hook-port']);

/** The token a name stands for; any other word (`relay`, `mcp`, an unknown name) as it was, for the command to judge. */
const canonicalVendor = (name: string): string => vendorToken(name) ?? name;

/** `claude=18377` → `claude-code=18377`; anything else unchanged. */
const canonicalPrefix = (value: string): string => {
  const eq = value.indexOf('=');
  return eq === -1 ? value : `${canonicalVendor(value.slice(0, eq))}${value.slice(eq)}`;
};

type ParseFn = (value: string, previous: unknown) => unknown;

export function acceptVendorNames(program: Command): void {
  for (const command of program.commands) {
    for (const arg of command.registeredArguments) {
      if (!VENDOR_ARGUMENTS.has(arg.name())) continue;
      const own = arg.parseArg as ParseFn | undefined;
      // Commander folds a variadic argument's values through the parser one at a time.
      arg.argParser((value: string, previous: unknown) => {
        const token = canonicalVendor(value);
        if (own !== undefined) return own(token, previous);
        return arg.variadic ? [...(Array.isArray(previous) ? previous : []), token] : token;
      });
    }
    for (const option of command.options) {
      const long = option.long ?? '';
      const map = VENDOR_OPTIONS.has(long)
        ? canonicalVendor
        : VENDOR_PREFIXED_OPTIONS.has(long)
          ? canonicalPrefix
          : undefined;
      if (map === undefined) continue;
      const own = option.parseArg as ParseFn | undefined;
      option.argParser((value: string, previous: unknown) =>
        own === undefined ? map(value) : own(map(value), previous),
      );
    }
  }
}
