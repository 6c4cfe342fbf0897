// `aep-steer adapter` as a real process with the test seams the shipped CLI does not have:
// AEP_TEST_LOG_FULL_FLAG names a file while which every log write fails with ENOSPC, exactly
// where a full disk fails it, so the fault suite runs the same refusal path (D22) where no tmpfs
// can be mounted.
import { existsSync, writeSync } from 'node:fs';
import { Command } from 'commander';
import { registerAdapter } from '../../src/cli/adapter-command.js';
import type { WriteFn } from '../../src/streams/log.js';

const fullWhile =
  (flag: string): WriteFn =>
  (fd, buf, offset, length, position) => {
    if (existsSync(flag))
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
    return writeSync(fd, buf, offset, length, position);
  };

const flag = process.env.AEP_TEST_LOG_FULL_FLAG;
const program = new Command('aep-steer');
registerAdapter(program, flag ? { logWrite: fullWhile(flag) } : {});
await program.parseAsync(process.argv);
