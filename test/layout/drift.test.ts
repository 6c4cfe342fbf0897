// The drift check's parts that decide what it reports: which vendors it knows (the pinned list),
// which e2e files are a vendor's, and what counts as a change in the shapes a vendor sends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain ES module script without types
import { filesOf, pinnedVendors, readShapes, shapeChanges } from '../../scripts/drift.mjs';

test('every vendor CLI the install script pins is read by the drift check, with package, version and binary', () => {
  const script = readFileSync(join(import.meta.dirname, '..', '..', 'scripts', 'install-vendor-cli.sh'), 'utf8');
  const pinnedLines = script.split('\n').filter((l) => /^\s*[a-z-]+\)\s+pkg='/.test(l)).length;
  const rows = pinnedVendors() as { name: string; pkg: string; pinned: string; bin: string }[];
  assert.is(rows.length, pinnedLines);
  assert.ok(pinnedLines >= 4);
  for (const r of rows) assert.match(r.pinned, /^\d+\.\d+\.\d+$/, r.name);
  const claude = rows.find((r) => r.name === 'claude-code');
  assert.equal(claude && [claude.pkg, claude.bin], ['@anthropic-ai/claude-code', 'claude']);
});

test("a vendor's e2e files are those named for it", () => {
  const claude = filesOf({ name: 'claude-code' }) as string[];
  assert.ok(claude.length > 0 && claude.every((f) => f.startsWith('claude-')), claude.join(', '));
  const codex = filesOf({ name: 'codex' }) as string[];
  assert.ok(codex.includes('codex.e2e.ts') && codex.every((f) => f.startsWith('codex')), codex.join(', '));
  assert.not.ok(codex.includes('mcp-orchestrator.e2e.ts'));
});

test('shape changes: keys added and removed per message kind, kinds new and gone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drift-'));
  try {
    const pinned = join(dir, 'pinned.jsonl');
    const newest = join(dir, 'newest.jsonl');
    const line = (src: string, kind: string, keys: string[]) => `${JSON.stringify({ src, kind, keys })}\n`;
    writeFileSync(
      pinned,
      line('hook', 'Stop', ['session_id:string', 'stop_hook_active:boolean']) +
        line('hook', 'Stop', ['session_id:string', 'cwd:string']) +
        line('hook', 'Notification', ['message:string']),
    );
    writeFileSync(
      newest,
      line('hook', 'Stop', ['session_id:string', 'cwd:string', 'reason:string']) +
        line('hook', 'Interrupt', ['source:string']),
    );
    const changes = shapeChanges(readShapes(pinned), readShapes(newest)) as string[];
    assert.equal(changes, [
      'hook Stop: + reason:string',
      'hook Stop: − stop_hook_active:boolean',
      'new message hook Interrupt',
      'no longer seen: hook Notification',
    ]);
    assert.equal(shapeChanges(readShapes(pinned), readShapes(pinned)), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
