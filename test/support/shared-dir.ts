// Where the AEP standard's schemas and fixtures, and the vendor reference samples, are read in
// place (never copied into the project): AEP_CONFORMANCE_DIR (default ../shared/aep) and
// AEP_REFERENCE_DIR (default ../shared/reference), relative to the project root.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const aepDir = resolve(projectRoot, process.env.AEP_CONFORMANCE_DIR ?? '../shared/aep');
export const referenceDir = resolve(projectRoot, process.env.AEP_REFERENCE_DIR ?? '../shared/reference');

export const readJson = <T = unknown>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
export const aepFile = (...parts: string[]): string => join(aepDir, ...parts);
export const referenceFile = (...parts: string[]): string => join(referenceDir, ...parts);
