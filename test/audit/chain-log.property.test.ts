// D47: an adapter log is one hash chain. A real log written by a running adapter verifies whole,
// through rotation and compaction (D24); and any one edit, deletion, insertion or reorder of its
// records is found, at the record it touched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { lineHash } from '../../src/protocol/chain.js';
import { verifyLog } from '../../src/audit/verify-log.js';
import { runVerify, VERIFY_EXIT } from '../../src/cli/audit-verify.js';
import { validateEvent } from '../../src/protocol/validate.js';
import { adapter, steerRounds, tempLog } from '../support/adapter.js';
import { instructCmd } from '../support/session-steps.js';
import { until } from '../support/until.js';

/** A log of one generation, written by an adapter steering a few sessions. */
async function realLog(): Promise<string[]> {
  const logPath = tempLog();
  const a = await adapter({ logPath });
  await steerRounds(a, 'pl', 3, 6);
  await a.handle.close();
  return readFileSync(logPath, 'utf8').trimEnd().split('\n');
}

const LINES = await realLog();

function verifyLines(lines: readonly string[]) {
  const path = join(mkdtempSync(join(tmpdir(), 'chain-')), 'events.jsonl');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return verifyLog(path);
}

const at = (line: number) => `events.jsonl:${line}`;

test('D47 a log as the adapter wrote it verifies whole, every record linked', () => {
  const v = verifyLines(LINES);
  assert.equal(v.breaks, []);
  assert.is(v.records, LINES.length);
  assert.ok(LINES.length > 40, `a log of some length (${LINES.length} records)`);
});

test('D47 the chain sits beside the envelope: every logged event is still a valid AEP event', () => {
  const events = LINES.map((l) => JSON.parse(l) as { k: string; e?: unknown }).filter((r) => r.k === 'ev');
  assert.ok(events.length > 10);
  for (const r of events) assert.equal(validateEvent(r.e), []);
});

test('D47 audit --verify on an edited log exits 3 and names the line', async () => {
  const lines = [...LINES];
  lines[4] = lines[4]!.replace('"k":"', '"k" :"');
  const path = join(mkdtempSync(join(tmpdir(), 'chain-')), 'events.jsonl');
  writeFileSync(path, `${lines.join('\n')}\n`);
  const out: string[] = [];
  const w = { write: (s: string) => out.push(s) };
  assert.is(await runVerify(path, {}, { out: w, err: w } as never), VERIFY_EXIT.broken);
  assert.match(out.join(''), 'changed at events.jsonl:5');
  writeFileSync(path, `${LINES.join('\n')}\n`);
  assert.is(await runVerify(path, {}, { out: w, err: w } as never), VERIFY_EXIT.intact);
});

test('D47 a changed record is named: the first break is the line that was edited', () => {
  // The last record has no successor to hold its hash; only a signed head covers it.
  const idx = fc.integer({ min: 0, max: LINES.length - 2 });
  fc.assert(
    fc.property(idx, fc.string({ minLength: 1, maxLength: 8 }), (i, extra) => {
      const lines = [...LINES];
      const r = JSON.parse(lines[i]!) as Record<string, unknown>;
      // Any field but the chain's own: an event's text, an input's session, a journal's hook.
      const key = Object.keys(r).find((k) => k !== 'k' && k !== 'n' && k !== 'p')!;
      r[key] = { was: r[key], extra };
      const { n, p, ...rest } = r;
      lines[i] = JSON.stringify({ ...rest, n, p });
      const b = verifyLines(lines).breaks;
      assert.is(b[0]?.kind, 'changed');
      assert.is(b[0]?.at, at(i + 1));
    }),
    { numRuns: 60 },
  );
});

test('D47 a removed record is named: the break is at the record after the gap, with the places missing', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: LINES.length - 2 }), fc.integer({ min: 1, max: 3 }), (i, count) => {
      const lines = [...LINES];
      const gone = lines.splice(i, Math.min(count, lines.length - 1 - i));
      const b = verifyLines(lines).breaks;
      assert.is(b[0]?.kind, 'removed');
      assert.is(b[0]?.at, at(i + 1));
      assert.ok(b[0]?.detail.includes(`records ${i + 1}–${i + gone.length}`), b[0]?.detail);
    }),
    { numRuns: 60 },
  );
});

test('D47 an inserted record is named, a copied one or one forged to link to the record before it', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: LINES.length - 1 }),
      fc.integer({ min: 0, max: LINES.length - 1 }),
      fc.boolean(),
      (i, from, forge) => {
        const lines = [...LINES];
        let extra = lines[from]!;
        if (forge) {
          // A forger who knows the scheme links the record to the one before it.
          const r = JSON.parse(extra) as Record<string, unknown>;
          const prev = JSON.parse(lines[i - 1]!) as { n: number };
          const { n: _n, p: _p, ...rest } = r;
          extra = JSON.stringify({ ...rest, n: prev.n + 1, p: lineHash(lines[i - 1]!) });
        }
        lines.splice(i, 0, extra);
        const b = verifyLines(lines).breaks;
        assert.is(b[0]?.kind, 'inserted');
        // A copy (forged or not) put just before its own original is the same text twice: either may be named.
        const twin = from === i;
        assert.ok(b[0]?.at === at(i + 1) || (twin && b[0]?.at === at(i + 2)), `${b[0]?.at} for ${i + 1}`);
      },
    ),
    { numRuns: 60 },
  );
});

test('D47 two records that traded places are named at the first of them', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: LINES.length - 2 }), (i) => {
      const lines = [...LINES];
      [lines[i], lines[i + 1]] = [lines[i + 1]!, lines[i]!];
      const b = verifyLines(lines).breaks;
      assert.is(b[0]?.kind, 'reordered');
      assert.is(b[0]?.at, at(i + 1));
      assert.is(b.length, 1, 'the pair is named once');
    }),
    { numRuns: 60 },
  );
});

test('D47 D24 a log that went through rotations, compaction and a restart verifies whole from its compacted head', async () => {
  const logPath = tempLog();
  const first = await adapter({ logPath, segmentBytes: 4096, keepSegments: 1 });
  await steerRounds(first, 'rc', 6, 24);
  await first.handle.close();
  const second = await adapter({ logPath, segmentBytes: 4096, keepSegments: 1 });
  second.handle.command(instructCmd('after-restart', 'one more', 'rc-0'));
  await until(() => second.events.some((e) => e.cause === 'after-restart'), 'the ack after the restart');
  await second.handle.close();
  const segs = readdirSync(dirname(logPath)).filter((f) => f.includes('.seg-'));
  const v = verifyLog(logPath);
  assert.equal(v.breaks, []);
  assert.ok(v.start.n > 0, `the oldest kept file starts from a compacted head (${v.start.n})`);
  assert.ok(!segs.includes('events.jsonl.seg-000000'), 'the first generation was compacted away');
  assert.is(v.files.length, segs.length + 1);
  // A kept segment edited behind the active file is still found.
  const seg = join(dirname(logPath), segs.sort()[0]!);
  const lines = readFileSync(seg, 'utf8').split('\n');
  lines[2] = lines[2]!.replace('"k":"', '"k" :"');
  writeFileSync(seg, lines.join('\n'));
  assert.is(verifyLog(logPath).breaks[0]?.at, `${segs.sort()[0]}:3`);
});

test.run();
