// `aep-steer`: parses the command line and hands over to one module per command (catalogue.ts).
import { main } from './catalogue.js';

const code = await main(process.argv);
if (code !== undefined) process.exitCode = code;
