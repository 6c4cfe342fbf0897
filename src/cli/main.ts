// `aep-steer`: parses the command line and hands over to one module per command (catalogue.ts).
// `--version` alone answers before the parser loads: it is the one call scripts make often.
import { VERSION } from './usage.js';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import('./catalogue.js');
  const code = await main(process.argv);
  if (code !== undefined) process.exitCode = code;
}
