// Locates the AEP standard's schemas and fixtures, read in place (never copied into the project).
// AEP_CONFORMANCE_DIR overrides the default ../shared/aep, resolved from the project root.
// Under CI=true a missing corpus fails the run; elsewhere it is reported and the suite is empty.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const configured = process.env.AEP_CONFORMANCE_DIR;
const corpusDir = configured
  ? isAbsolute(configured)
    ? configured
    : resolve(root, configured)
  : resolve(root, '..', 'shared', 'aep');

const present = existsSync(join(corpusDir, 'fixtures')) && existsSync(join(corpusDir, 'schemas'));

/** True when the corpus is there; otherwise reports it (and fails the process under CI). */
export function corpusAvailable(suite: string): boolean {
  if (present) return true;
  const msg = `AEP conformance corpus not found at ${corpusDir} (set AEP_CONFORMANCE_DIR); ${suite} not run`;
  if (process.env.CI === 'true') {
    console.error(`FAIL: ${msg}`);
    process.exitCode = 1;
    throw new Error(msg);
  }
  console.warn(`note: ${msg}`);
  return false;
}

export const readJson = <T = unknown>(rel: string): T => JSON.parse(readFileSync(join(corpusDir, rel), 'utf8')) as T;

export const readJsonl = <T = unknown>(rel: string): T[] =>
  readFileSync(join(corpusDir, rel), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

export const listDir = (rel: string): string[] => readdirSync(join(corpusDir, rel));

/** One line per fixture class, so a run shows what was covered. */
export function report(label: string, passed: number, total: number): void {
  console.log(`  conformance ${label}: ${passed}/${total} pass`);
}
