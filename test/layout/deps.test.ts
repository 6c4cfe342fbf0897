// The layers of src/ hold: `npm run deps` (dependency-cruiser with .dependency-cruiser.cjs) finds
// no import that runs back up the layers and no cycle. The rules themselves are shown to bite on
// a small tree that breaks each of them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const cruiser = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

const cruise = (cwd: string): { status: number | null; out: string } => {
  const r = spawnSync(process.execPath, [cruiser, 'src', '--config', join(root, '.dependency-cruiser.cjs')], {
    cwd,
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};

test('npm run deps passes on the source tree', () => {
  const r = spawnSync('npm', ['run', '--silent', 'deps'], { cwd: root, encoding: 'utf8' });
  assert.is(r.status, 0, `${r.stdout}${r.stderr}`);
});

test('the rules refuse an import back up the layers, a cycle and an unplaced folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-deps-'));
  try {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
      'src/protocol/wire.ts': "import { run } from '../cli/main.js';\nexport const wire = run;\n",
      'src/cli/main.ts': 'export const run = 1;\n',
      'src/machines/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'src/machines/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'src/elsewhere/x.ts': "import { run } from '../cli/main.js';\nexport const x = run;\n",
      'src/cli/uses.ts': "import { y } from '../further/y.js';\nexport const uses = y;\n",
      'src/further/y.ts': 'export const y = 1;\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const r = cruise(dir);
    assert.is.not(r.status, 0);
    assert.match(r.out, /no-upward-from-protocol: src\/protocol\/wire\.ts → src\/cli\/main\.ts/);
    assert.match(r.out, /no-circular: src\/machines\/a\.ts/);
    assert.match(r.out, /layer-known: src\/elsewhere\/x\.ts/);
    assert.match(r.out, /layer-known: src\/cli\/uses\.ts → src\/further\/y\.ts/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
