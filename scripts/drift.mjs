#!/usr/bin/env node
// The drift check: installs the newest published build of each vendor CLI beside the pinned one
// (.cache/drift/, never the project's dependencies), runs that vendor's end-to-end files against
// it, and writes a table: the version, pass or fail per file, and what changed in the shapes of
// the vendor's hook inputs and lane messages (key paths and types, recorded with
// AEP_WIRE_SHAPES by src/protocol/wire-shapes.ts, never values), against the pinned CLI on the
// same probe file. It downloads, so it runs outside CI. The table replaces the one between the
// drift markers in docs/vendors.md.
// Usage: npm run drift [-- VENDOR...] [--no-docs] [--probe-only]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const noDocs = flag('--no-docs');
const probeOnly = flag('--probe-only');
const driftDir = join(root, '.cache', 'drift');
const pinnedDir = process.env.AEP_VENDOR_CLIS_DIR ?? join(root, '.vendor-clis');

/** The pinned vendors, read from the one place that pins them. */
export function pinnedVendors() {
  const text = readFileSync(join(root, 'scripts', 'install-vendor-cli.sh'), 'utf8');
  const rows = [];
  for (const m of text.matchAll(/^\s*([a-z-]+)\)\s+pkg='([^']+)';\s*version='([^']+)';\s*bin='([^']+)'/gm)) {
    rows.push({ name: m[1], pkg: m[2], pinned: m[3], bin: m[4] });
  }
  return rows;
}

/**
 * Where a vendor ships its newest build somewhere other than its pinned package. Claude Code:
 * the npm CLI is deprecated and stays at its last release; newer CLIs ship as the native binary
 * inside the Agent SDK's platform package, whose manifest names the CLI's version.
 */
const CHANNELS = {
  'claude-code': {
    pkg: '@anthropic-ai/claude-agent-sdk',
    binary: join('node_modules', '@anthropic-ai', 'claude-agent-sdk-linux-x64', 'claude'),
    version: (dir) =>
      JSON.parse(readFileSync(join(dir, 'node_modules', '@anthropic-ai', 'claude-agent-sdk', 'manifest.json'), 'utf8'))
        .version,
  },
};

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  return { code: r.status ?? 1, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function newestOf(pkg) {
  const r = run('npm', ['view', pkg, 'version']);
  if (r.code !== 0) throw new Error(`npm view ${pkg} failed:\n${r.out}`);
  return r.out.trim().split('\n').pop();
}

/** Installs the newest build into .cache/drift/<name>, laid out as .vendor-clis is (node_modules/.bin/<bin>). */
function installNewest(v) {
  const channel = CHANNELS[v.name];
  const pkg = channel?.pkg ?? v.pkg;
  const published = newestOf(pkg);
  const dir = join(driftDir, v.name);
  const bin = join(dir, 'node_modules', '.bin', v.bin);
  const stamp = join(dir, 'drift-installed');
  if (!(existsSync(stamp) && readFileSync(stamp, 'utf8') === `${pkg}@${published}` && existsSync(bin))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: `drift-${v.name}`, private: true, allowScripts: { [pkg]: true } }),
    );
    console.error(`drift: installing ${pkg}@${published} into ${dir}`);
    const r = run('npm', [
      'install',
      '--prefix',
      dir,
      '--no-audit',
      '--no-fund',
      '--engine-strict=false',
      '--save-exact',
      `${pkg}@${published}`,
    ]);
    if (r.code !== 0) throw new Error(`install of ${pkg}@${published} failed:\n${r.out.slice(-2000)}`);
    if (channel !== undefined) {
      mkdirSync(dirname(bin), { recursive: true });
      rmSync(bin, { force: true });
      symlinkSync(join(dir, channel.binary), bin);
    }
    writeFileSync(stamp, `${pkg}@${published}`);
  }
  const version = channel !== undefined ? channel.version(dir) : published;
  return { pkg, published, version };
}

/** The vendor's own e2e files: those named for it (`claude-…`, `codex-…`, `qwen-…`). */
export function filesOf(v) {
  const stem = v.name.split('-')[0];
  return readdirSync(join(root, 'test', 'e2e'))
    .filter((f) => f.endsWith('.e2e.ts') && (f.startsWith(`${stem}-`) || f.startsWith(`${stem}.`)))
    .sort();
}

/** The probe file whose shapes are compared: the vendor's plain e2e file, else its first. */
const probeOf = (files, v) =>
  files.find((f) => f === `${v.name}.e2e.ts`) ?? files.find((f) => f === `${v.name.split('-')[0]}.e2e.ts`) ?? files[0];

function runFile(file, clisDir, shapes) {
  rmSync(shapes, { force: true });
  const started = Date.now();
  const r = run(
    process.execPath,
    [join('scripts', 'test.mjs'), 'test', '.e2e.ts', '--jobs', '1', '--timeout-ms', '900000', '--no-build', file],
    { cwd: root, env: { ...process.env, AEP_VENDOR_CLIS_DIR: clisDir, AEP_WIRE_SHAPES: shapes } },
  );
  return { file, pass: r.code === 0, seconds: Math.round((Date.now() - started) / 1000), tail: r.out.slice(-1500) };
}

export function readShapes(file) {
  const by = new Map();
  if (!existsSync(file)) return by;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const { src, kind, keys } = JSON.parse(line);
    const key = `${src} ${kind}`;
    const set = by.get(key) ?? new Set();
    for (const k of keys) set.add(k);
    by.set(key, set);
  }
  return by;
}

/** What the newest build sends that the pinned one did not, and the reverse, per message kind. */
export function shapeChanges(pinned, newest) {
  const lines = [];
  for (const [kind, keys] of newest) {
    const old = pinned.get(kind);
    if (old === undefined) {
      lines.push(`new message ${kind}`);
      continue;
    }
    const added = [...keys].filter((k) => !old.has(k));
    const removed = [...old].filter((k) => !keys.has(k));
    if (added.length > 0) lines.push(`${kind}: + ${added.join(', ')}`);
    if (removed.length > 0) lines.push(`${kind}: − ${removed.join(', ')}`);
  }
  for (const kind of pinned.keys()) if (!newest.has(kind)) lines.push(`no longer seen: ${kind}`);
  return lines;
}

function main() {
  const wanted = args.filter((a) => !a.startsWith('--'));
  const vendors = pinnedVendors().filter((v) => wanted.length === 0 || wanted.includes(v.name));
  if (vendors.length === 0) {
    console.error(`drift: no pinned vendor named ${wanted.join(', ')} (see scripts/install-vendor-cli.sh)`);
    process.exit(2);
  }
  mkdirSync(driftDir, { recursive: true });
  const build = run(process.execPath, [join('scripts', 'build.mjs')], { cwd: root });
  if (build.code !== 0) {
    console.error(`drift: the build failed; fix it first:\n${build.out}`);
    process.exit(1);
  }
  const sections = [];
  let failed = false;
  for (const v of vendors) {
    const files = filesOf(v);
    const probe = probeOf(files, v);
    const pinnedInstall = run('sh', [join(root, 'scripts', 'install-vendor-cli.sh'), v.name], { cwd: root });
    if (pinnedInstall.code !== 0) throw new Error(`pinned install of ${v.name} failed:\n${pinnedInstall.out}`);
    const newest = installNewest(v);
    console.error(`drift: ${v.name} pinned ${v.pinned}, newest ${newest.version} (${newest.pkg}@${newest.published})`);
    const results = [];
    const same = newest.version === v.pinned && newest.pkg === v.pkg;
    const pinnedShapes = join(driftDir, `shapes-${v.name}-pinned.jsonl`);
    const newestShapes = join(driftDir, `shapes-${v.name}-newest.jsonl`);
    const pinnedProbe = probe === undefined ? undefined : runFile(probe, pinnedDir, pinnedShapes);
    for (const f of same ? [] : probeOnly ? [probe].filter(Boolean) : files) {
      const shapes = f === probe ? newestShapes : join(driftDir, `shapes-${v.name}-${f}.jsonl`);
      const r = runFile(f, driftDir, shapes);
      console.error(`drift: ${v.name}@${newest.version} ${f}: ${r.pass ? 'pass' : 'FAIL'} (${r.seconds} s)`);
      if (!r.pass) {
        failed = true;
        console.error(r.tail);
      }
      results.push(r);
    }
    const changes = same ? [] : shapeChanges(readShapes(pinnedShapes), readShapes(newestShapes));
    sections.push({ v, newest, same, probe, pinnedProbe, results, changes });
  }
  const table = render(sections);
  writeFileSync(join(driftDir, 'table.md'), table);
  process.stdout.write(table);
  if (!noDocs) writeDocs(table);
  process.exit(failed ? 1 : 0);
}

function render(sections) {
  const out = [`Drift run of ${new Date().toISOString().slice(0, 10)} (\`npm run drift\`).`, ''];
  out.push('| vendor | pinned | newest | e2e file | result |', '| --- | --- | --- | --- | --- |');
  for (const s of sections) {
    const newest = `${s.newest.version}${s.newest.pkg === s.v.pkg ? '' : ` (in ${s.newest.pkg} ${s.newest.published})`}`;
    if (s.same) out.push(`| ${s.v.name} | ${s.v.pinned} | ${newest} | (the pinned build is the newest) | |`);
    for (const r of s.results)
      out.push(
        `| ${s.v.name} | ${s.v.pinned} | ${newest} | ${r.file} | ${r.pass ? 'pass' : '**fail**'} (${r.seconds} s) |`,
      );
  }
  out.push('', 'What changed in hook inputs and lane messages (key paths and types), probe file per vendor:', '');
  for (const s of sections) {
    if (s.same) continue;
    const probe = `${s.probe}${s.pinnedProbe?.pass === false ? ' (it failed on the pinned build too)' : ''}`;
    if (s.changes.length === 0) out.push(`- ${s.v.name} (${probe}): no change seen.`);
    else {
      out.push(`- ${s.v.name} (${probe}):`);
      for (const c of s.changes) out.push(`  - ${c}`);
    }
  }
  return `${out.join('\n')}\n`;
}

function writeDocs(table) {
  const file = join(root, 'docs', 'vendors.md');
  const text = readFileSync(file, 'utf8');
  const start = '<!-- drift:start -->';
  const end = '<!-- drift:end -->';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) {
    console.error(`drift: docs/vendors.md has no ${start} … ${end} markers; the table is in .cache/drift/table.md`);
    return;
  }
  writeFileSync(file, `${text.slice(0, i + start.length)}\n${table}${text.slice(j)}`);
}

// Run as a script; imported (by its test), only the helpers above.
if (process.argv[1] === fileURLToPath(import.meta.url)) main();
