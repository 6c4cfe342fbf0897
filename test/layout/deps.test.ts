// The layers of src/ hold: `npm run deps` (dependency-cruiser with .dependency-cruiser.cjs) finds
// no import that runs back up the layers and no cycle. Every folder of src/ is its own layer. Each
// rule is shown to bite: on a small tree that breaks every one of them, and on a copy of src/ with
// back-imports and a cycle planted in real modules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const cruiser = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
const configPath = join(root, '.dependency-cruiser.cjs');

interface Rule {
  name: string;
  to: { path?: string };
}
const rules = (createRequire(import.meta.url)(configPath) as { forbidden: Rule[] }).forbidden;
const upward = rules.filter((r) => r.name.startsWith('no-upward-from-'));
/** The layers bottom to top, as the rules name them: each rule's own folder, then the top one. */
const layers = [
  ...upward.map((r) => r.name.slice('no-upward-from-'.length)),
  /^\^src\/\((\w+)\)\/$/.exec(upward.at(-1)!.to.path!)![1]!,
];

const cruise = (cwd: string): { status: number | null; out: string } => {
  const r = spawnSync(process.execPath, [cruiser, 'src', '--config', configPath], { cwd, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};

const plant = (dir: string, files: Record<string, string>): void => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
};

const withTemp = (fn: (dir: string) => void): void => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-deps-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

const TSCONFIG = JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } });

test('npm run deps passes on the source tree', () => {
  const r = spawnSync('npm', ['run', '--silent', 'deps'], { cwd: root, encoding: 'utf8' });
  assert.is(r.status, 0, `${r.stdout}${r.stderr}`);
});

test('every folder of src/ is one layer, each named once', () => {
  const dirs = readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.equal([...layers].sort(), dirs.sort());
  assert.is(new Set(layers).size, layers.length);
});

test('each layer may import the one below it, and each rule against importing the one above fires', () => {
  withTemp((dir) => {
    const leaves = Object.fromEntries(layers.map((l) => [`src/${l}/leaf.ts`, `export const ${l} = 1;\n`]));
    const down = Object.fromEntries(
      layers
        .slice(1)
        .map((l, i) => [
          `src/${l}/down.ts`,
          `import { ${layers[i]} } from '../${layers[i]}/leaf.js';\nexport const d = ${layers[i]};\n`,
        ]),
    );
    plant(dir, { 'tsconfig.json': TSCONFIG, ...leaves, ...down });
    const clean = cruise(dir);
    assert.is(clean.status, 0, clean.out);
    const up = Object.fromEntries(
      layers
        .slice(0, -1)
        .map((l, i) => [
          `src/${l}/up.ts`,
          `import { ${layers[i + 1]} } from '../${layers[i + 1]}/leaf.js';\nexport const u = ${layers[i + 1]};\n`,
        ]),
    );
    plant(dir, up);
    const r = cruise(dir);
    assert.is.not(r.status, 0);
    layers.slice(0, -1).forEach((l, i) => {
      assert.ok(
        r.out.includes(`no-upward-from-${l}: src/${l}/up.ts → src/${layers[i + 1]}/leaf.ts`),
        `no-upward-from-${l} did not fire:\n${r.out}`,
      );
    });
  });
});

test('the rules refuse an import back up the layers, a cycle and an unplaced folder', () => {
  withTemp((dir) => {
    plant(dir, {
      'tsconfig.json': TSCONFIG,
      'src/protocol/wire.ts': "import { run } from '../cli/main.js';\nexport const wire = run;\n",
      'src/cli/main.ts': 'export const run = 1;\n',
      'src/machines/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'src/machines/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'src/elsewhere/x.ts': "import { run } from '../cli/main.js';\nexport const x = run;\n",
      'src/cli/uses.ts': "import { y } from '../further/y.js';\nexport const uses = y;\n",
      'src/further/y.ts': 'export const y = 1;\n',
    });
    const r = cruise(dir);
    assert.is.not(r.status, 0);
    assert.match(r.out, /no-upward-from-protocol: src\/protocol\/wire\.ts → src\/cli\/main\.ts/);
    assert.match(r.out, /no-circular: src\/machines\/a\.ts/);
    assert.match(r.out, /layer-known: src\/elsewhere\/x\.ts/);
    assert.match(r.out, /layer-known: src\/cli\/uses\.ts → src\/further\/y\.ts/);
    // Every rule of the config was shown to fire, here or in the test above.
    for (const rule of rules.filter((x) => !x.name.startsWith('no-upward-from-')))
      assert.ok(r.out.includes(`${rule.name}: `), rule.name);
  });
});

test('on a copy of src/, a back-import planted in a real module and a cycle are caught where they are written', () => {
  withTemp((dir) => {
    cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
    cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    const prepend = (path: string, line: string): void =>
      writeFileSync(join(dir, path), `${line}\n${readFileSync(join(dir, path), 'utf8')}`);
    // The lane contract reaching up into a vendor table; the notifier into the console (the old
    // answer-links mistake); the notice targets importing the notices that import them.
    prepend('src/streams/lane.ts', "import type { VendorTable } from '../adapters/table.js';");
    prepend('src/notify/notifier.ts', "import type { AnswerPageContext } from '../console/answer-page.js';");
    prepend('src/notify/targets.ts', "import type { Notice } from './notices.js';");
    const r = cruise(dir);
    assert.is.not(r.status, 0);
    assert.match(r.out, /no-upward-from-streams: src\/streams\/lane\.ts → src\/adapters\/table\.ts/);
    assert.match(r.out, /no-upward-from-notify: src\/notify\/notifier\.ts → src\/console\/answer-page\.ts/);
    assert.match(
      r.out,
      /no-circular: src\/notify\/notices\.ts →\s+src\/notify\/targets\.ts →\s+src\/notify\/notices\.ts/,
    );
  });
});

test.run();
