// Invalid corpus: each of the 35 cases is rejected for the rule the fixture names.
// The fixture cites spec sections; RULE_MAP translates each citation to this project's rule id.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { relayCheck, validateEvent, type IssueRule } from '../../src/protocol/validate.js';
import { checkStream, type ViolationRule } from '../../src/protocol/stream-checks.js';
import { corpusAvailable, readJson, report } from './corpus.js';

interface Case {
  name: string;
  rule: string;
  event?: unknown;
  events?: AepEvent[];
}

/** Fixture rule citation → rule id; the first pattern that matches wins. */
const RULE_MAP: [RegExp, IssueRule | ViolationRule][] = [
  [/§5\.4 \(scalar values only\)/, 'extension-value'],
  [/§5\.4/, 'extension-name'],
  [/field_spec|payload schema/, 'payload'],
  [/values rule/, 'form-values'],
  [/terminal before session\.ended/, 'attention-open-at-end'],
  [/terminal exclusivity/, 'terminal-exclusive'],
  [/id unique per emitter/, 'id-collision'],
  [/position uniqueness/, 'seq-regression'],
  [/epoch never reused/, 'epoch-regression'],
  [/one ack decision/, 'ack-decision'],
  [/AEP-0001 §5\.2|AEP-0004 §2\.2/, 'scoping'],
  [/AEP-0001 §6|AEP-0002 §3 \(closed set\)/, 'type-syntax'],
  [/§8\.1/, 'enum'],
  [/§5\.1 #14/, 'format'],
  [/§5\.1 #11/, 'attr-type'],
  [/§5\.1 #1 /, 'version'],
];

const expectedRule = (c: Case): IssueRule | ViolationRule | undefined => RULE_MAP.find(([re]) => re.test(c.rule))?.[1];

if (corpusAvailable('invalid')) {
  const { cases } = readJson<{ cases: Case[] }>('fixtures/invalid/cases.json');

  test('invalid: 35 cases, each mapped to a rule id', () => {
    assert.is(cases.length, 35);
    for (const c of cases) assert.ok(expectedRule(c), `no rule mapping for "${c.name}" (${c.rule})`);
  });

  test('invalid: every case is rejected for the rule it names', () => {
    let single = 0;
    let streams = 0;
    let envelope = 0;
    for (const c of cases) {
      const want = expectedRule(c)!;
      if (c.event !== undefined) {
        const issues = validateEvent(c.event);
        assert.ok(
          issues.some((i) => i.rule === want),
          `${c.name}: want ${want}, got ${JSON.stringify(issues)}`,
        );
        // Envelope-level failures are also refused at relay ingest (AEP-0003 §3.2); payload ones are not.
        const relay = relayCheck(c.event);
        if (want === 'payload') assert.is(relay, undefined, `${c.name}: relay tier does not read data`);
        else {
          assert.is(relay?.rule, want, `${c.name}: relay tier`);
          envelope++;
        }
        single++;
      } else {
        const events = c.events!;
        const violations = checkStream(events);
        const perEvent = events.flatMap((e) => validateEvent(e));
        assert.equal(perEvent, [], `${c.name}: each event alone is valid`);
        assert.ok(
          violations.some((v) => v.rule === want),
          `${c.name}: want ${want}, got ${JSON.stringify(violations)}`,
        );
        streams++;
      }
    }
    report('invalid single events', single, cases.filter((c) => c.event !== undefined).length);
    report('invalid envelope-level (relay tier)', envelope, 17);
    report('invalid streams', streams, cases.filter((c) => c.events !== undefined).length);
    assert.is(envelope, 17);
  });
}

test.run();
