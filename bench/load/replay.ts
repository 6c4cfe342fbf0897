// Log replay at start, in a fresh process: `{ path, mode }`. `make` writes a log of about
// `records` records through the real actor host (sessions, instructions, deliveries); `replay`
// opens it as a starting adapter does (read, parse, rebuild every session, recover); `parse`
// only JSON.parses each line of the same file, the floor. Answers `{ ms, records }`.
import { readFileSync, writeFileSync } from 'node:fs';
import { command } from '../../src/protocol/index.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { openEventLog, type LogRecord } from '../../src/streams/log.js';
import { LogReplay } from '../../src/streams/replay.js';
import { answer, argOf } from '../lib/proc.js';
import { benchSurface } from '../lib/surface.js';

const arg = argOf<{ path: string; mode: 'make' | 'replay' | 'parse'; records?: number }>();
const surface = benchSurface();
const newHost = () => new ActorHost({ surface, instruct: true, host: 'bench' });

if (arg.mode === 'make') {
  const host = newHost();
  const records: LogRecord[] = [];
  const sender = { agent: 'bench-sender', host: 'bench' };
  let at = 1_700_000_000_000;
  let hookN = 0;
  for (let s = 0; records.length < (arg.records ?? 50_000); s += 1) {
    const session = `bench-session-${s % 200}`;
    const step = (item: Parameters<ActorHost['step']>[0]) => {
      const r = host.step(item);
      records.push(...r.records);
      // Every steering reply is written, as the hook endpoint reports (D9).
      for (const e of r.effects)
        if (e.kind === 'reply' && e.confirm)
          records.push(
            ...host.step({ kind: 'input', session, input: { type: 'reply.written', at, hookId: e.hookId } }).records,
          );
    };
    const hook = (event: string) => {
      const id = `h${hookN++}`;
      step({
        kind: 'hook',
        session,
        hookId: id,
        at: at++,
        hook: surface.classify({ session_id: session, hook_event_name: event }),
      });
    };
    if (s < 200) hook('SessionStart');
    for (let i = 0; i < 3; i += 1)
      step({
        kind: 'command',
        session,
        at: at++,
        command: command(sender, session, {
          type: surface.steeringType,
          data: { text: `instruction ${i} for ${session}` },
          capture: 'redacted',
        }),
      });
    hook('UserPromptSubmit');
    hook('PreToolUse');
  }
  writeFileSync(arg.path, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  answer({ ms: 0, records: records.length });
} else if (arg.mode === 'replay') {
  // As startAdapter does: each record replayed as it is read, then recover.
  const t0 = performance.now();
  const host = newHost();
  const replay = new LogReplay(host);
  let n = 0;
  const { log } = openEventLog(arg.path, {
    fsync: false,
    onRecord: (r, _end, line) => {
      n += 1;
      replay.record(r, line);
    },
  });
  replay.summary();
  host.recover(Date.now());
  const ms = performance.now() - t0;
  await log.close();
  answer({ ms, records: n });
} else {
  const t0 = performance.now();
  const text = readFileSync(arg.path, 'utf8');
  let n = 0;
  for (const line of text.split('\n'))
    if (line) {
      JSON.parse(line);
      n += 1;
    }
  answer({ ms: performance.now() - t0, records: n });
}
