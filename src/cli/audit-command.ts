// `aep-steer audit LOG...`: replays AEP JSONL and prints each instruction's lifecycle and every
// violation of the steering rules. Exit 0 clean, 1 violations found, 2 usage (unreadable file).
import { access, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { auditFiles } from '../audit/audit.js';
import { paintFor } from '../audit/paint.js';
import { renderJson, renderText } from '../audit/report.js';
import { runVerify, type VerifyOptions } from './audit-verify.js';

export const AUDIT_EXIT = { clean: 0, violations: 1, usage: 2 } as const;

/** Logs smaller than this finish before a bar would be worth drawing. */
const PROGRESS_MIN_BYTES = 4 * 1024 * 1024;

function progressBar(stream: NodeJS.WriteStream): (done: number, total: number) => void {
  let lastPercent = -1;
  return (done, total) => {
    const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
    if (percent === lastPercent) return;
    lastPercent = percent;
    const width = 30;
    const filled = Math.round((percent / 100) * width);
    stream.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${percent}%`);
    if (percent >= 100) stream.write('\r\u001b[2K');
  };
}

export async function runAudit(
  files: string[],
  opts: { json?: boolean },
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WriteStream },
): Promise<number> {
  if (files.length === 0) {
    io.err.write('audit: give at least one JSONL log file\n');
    return AUDIT_EXIT.usage;
  }
  for (const f of files) {
    try {
      await access(f);
    } catch {
      io.err.write(`audit: cannot read ${f}\n`);
      return AUDIT_EXIT.usage;
    }
  }
  const total = (await Promise.all(files.map(async (f) => (await stat(f)).size))).reduce((a, b) => a + b, 0);
  const onProgress = io.err.isTTY === true && total >= PROGRESS_MIN_BYTES ? progressBar(io.err) : undefined;
  const result = await auditFiles(files, onProgress ? { onProgress } : {});
  io.out.write(`${opts.json ? renderJson(result) : renderText(result, paintFor(io.out))}\n`);
  return result.violations.length === 0 ? AUDIT_EXIT.clean : AUDIT_EXIT.violations;
}

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description("replay AEP JSONL logs (adapter logs or a relay export) and check every instruction's lifecycle")
    .argument('[log...]', 'AEP JSONL files, read in the order given')
    .option('--json', 'print the result as JSON')
    .option(
      '--verify [target]',
      "check the hash chains of an adapter log or a relay's store file and its signed checkpoints (D47); with --relay and no file, a running relay's store",
    )
    .option('--key <file>', "with --verify: the relay's public (or private) key, PEM")
    .option(
      '--relay <url>',
      "with --verify: the relay's public key from its discovery document; with no file, also its rows (the token needs the audit right)",
    )
    .option(
      '--token <token>',
      'with --verify --relay: the relay token (AEP_TOKEN; default for a loopback relay: the local token)',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 no violations, 1 violations found, 2 usage (unreadable file); --verify: 0 intact, 3 a record changed, removed, inserted or reordered, 4 a checkpoint fails its signature.',
    )
    .action(async (logs: string[], opts: { json?: boolean; verify?: string | true } & VerifyOptions) => {
      const io = { out: process.stdout, err: process.stderr };
      const target = opts.verify === true ? undefined : opts.verify;
      process.exitCode = opts.verify !== undefined ? await runVerify(target, opts, io) : await runAudit(logs, opts, io);
    });
}
