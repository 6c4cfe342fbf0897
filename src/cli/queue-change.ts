// `aep-steer queue --edit|--move|--promote|--pause|--resume|--clear` (D44): the sender's verbs on
// what waits. Each prints the settled outcome, or the refusal with its code and next step, and
// exits with the code docs/commands.md lists.
import type { Paint } from '../audit/paint.js';
import { senderOf, withConsumer } from '../consumer/connect.js';
import { refusedLine } from '../consumer/explain.js';
import { CLI_VOICE, refusalSentence } from '../consumer/next-step.js';
import type { QueueVerbOutcome, QueueVerbRequest } from '../consumer/queue-verbs.js';
import type { WithdrawOutcome } from '../consumer/withdraw.js';
import type { QueueVerb } from '../machines/command-inputs.js';
import { outcomePrinter, unreachableExit, type RelayFlags } from './relay-options.js';
import { WITHDRAW_EXIT } from './withdraw-command.js';

/** Exit codes of `queue`: the withdraw table's, with 0 for a listing or a change that took effect. */
const { withdrawn: _withdrawn, ...REFUSALS } = WITHDRAW_EXIT;
export const QUEUE_EXIT = { listed: 0, changed: 0, ...REFUSALS } as const;

export interface QueueChangeFlags extends RelayFlags {
  session: string;
  edit?: string;
  text?: string;
  move?: string;
  before?: string;
  to?: string;
  promote?: string;
  start?: boolean;
  pause?: boolean;
  resume?: boolean;
  clear?: boolean;
  vendor?: string;
  granted?: boolean;
  json?: boolean;
  timeout?: string;
}

/** True when the flags ask for a change rather than the listing. */
export const asksChange = (f: QueueChangeFlags): boolean =>
  [f.edit, f.move, f.promote].some((x) => x !== undefined) || f.pause === true || f.resume === true || f.clear === true;

/** The one verb the flags ask for, or what is wrong with them. */
function verbOf(f: QueueChangeFlags): { verb: QueueVerb; data: Record<string, unknown> } | { usage: string } {
  const asked = [f.edit, f.move, f.promote, f.pause, f.resume, f.clear].filter((x) => x !== undefined && x !== false);
  if (asked.length !== 1) return { usage: 'give one of --edit, --move, --promote, --pause, --resume, --clear' };
  if (f.edit !== undefined) {
    if (f.text === undefined) return { usage: '--edit <id> needs --text <new text>' };
    return { verb: 'edit', data: { instruction: f.edit, text: f.text } };
  }
  if (f.move !== undefined) {
    if ((f.before === undefined) === (f.to === undefined))
      return { usage: '--move <id> needs --before <id> or --to front|back, not both' };
    if (f.to !== undefined && f.to !== 'front' && f.to !== 'back') return { usage: '--to must be front or back' };
    return { verb: 'move', data: { instruction: f.move, ...(f.before ? { before: f.before } : { to: f.to }) } };
  }
  if (f.promote !== undefined)
    return { verb: 'promote', data: { instruction: f.promote, ...(f.start ? { idle: 'start' } : {}) } };
  return { verb: 'hold', data: { paused: f.pause === true } };
}

function describeChange(o: QueueVerbOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'changed': {
      const it = o.instruction ?? '';
      if (o.verb === 'edit')
        return `${p.green('✓')} edited: ${it} is at version ${String(o.data['version'])}, in its place`;
      if (o.verb === 'move') return `${p.green('✓')} moved: ${it} is number ${String(o.data['position'])} in the queue`;
      if (o.verb === 'promote')
        return `${p.green('✓')} promoted: ${it} goes in as a steer ${typeof o.data['lane'] === 'string' ? `through the ${o.data['lane']} lane` : "at the running turn's next moment"}`;
      return o.data['paused'] === true
        ? `${p.green('✓')} paused: nothing from the queue is delivered until \`aep-steer queue --session ${o.session} --resume\``
        : `${p.green('✓')} resumed: the queue is delivered again, in its order`;
    }
    case 'rejected': {
      const ctx = { session: o.session, vendor: o.vendor, ...(o.detail === undefined ? {} : { detail: o.detail }) };
      return `${p.red('✗')} not changed (${o.code ?? o.reason}): ${refusalSentence(o.code, CLI_VOICE, ctx)}`;
    }
    case 'refused':
      return refusedLine(o, p);
    case 'timeout':
      return `${p.yellow('…')} timeout: no answer from the session; ${CLI_VOICE.queue(o.session)}`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

const exitOf = (o: { outcome: string; code?: string }): number =>
  o.outcome === 'rejected' && o.code === 'already-delivered'
    ? QUEUE_EXIT.delivered
    : QUEUE_EXIT[o.outcome as keyof typeof QUEUE_EXIT];

/** `--clear`: withdraws each of the sender's instructions that wait, one withdraw each (D32). */
async function clearOwn(
  f: QueueChangeFlags,
  out: NodeJS.WritableStream & { isTTY?: boolean },
  timeoutMs: number,
): Promise<number> {
  const [{ sendWithdraw }, { sessionQueue }, { describeWithdraw }] = await Promise.all([
    import('../consumer/withdraw.js'),
    import('../consumer/queue.js'),
    import('./withdraw-command.js'),
  ]);
  const { print } = outcomePrinter<WithdrawOutcome>(f.json, out, describeWithdraw);
  return withConsumer(
    f,
    async (consumer) => {
      const me = senderOf(consumer, f);
      const mine = (await sessionQueue(consumer, f.session)).filter((w) => f.granted || w.sender === me);
      let code: number = QUEUE_EXIT.changed;
      for (const w of mine) {
        const o = await sendWithdraw(consumer, f, {
          session: f.session,
          instruction: w.id,
          timeoutMs,
          ...(f.vendor ? { vendor: f.vendor } : {}),
          ...(f.granted ? { granted: true } : {}),
        });
        print(o);
        // An instruction delivered meanwhile is no failure of the clear: it no longer waits.
        if (o.outcome !== 'withdrawn' && !(o.outcome === 'rejected' && o.code === 'already-delivered'))
          code = exitOf(o);
      }
      if (mine.length === 0 && f.json !== true) out.write(`nothing of ${me}'s waits in session ${f.session}\n`);
      return code;
    },
    unreachableExit(print, QUEUE_EXIT, (detail) => ({
      outcome: 'unreachable' as const,
      session: f.session,
      instruction: '',
      detail,
    })),
  );
}

export async function runQueueChange(
  f: QueueChangeFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream },
  timeoutMs: number,
): Promise<number> {
  const asked = verbOf(f);
  if ('usage' in asked) {
    io.err.write(`queue: ${asked.usage}\n`);
    return QUEUE_EXIT.usage;
  }
  if (f.clear === true) return clearOwn(f, io.out, timeoutMs);
  const { sendQueueVerb } = await import('../consumer/queue-verbs.js');
  const { print } = outcomePrinter<QueueVerbOutcome>(f.json, io.out, describeChange);
  const req: QueueVerbRequest = {
    session: f.session,
    verb: asked.verb,
    data: asked.data,
    timeoutMs,
    ...(f.vendor ? { vendor: f.vendor } : {}),
    ...(f.granted ? { granted: true } : {}),
  };
  return withConsumer(
    f,
    async (consumer) => {
      const o = await sendQueueVerb(consumer, f, req);
      print(o);
      return exitOf(o);
    },
    unreachableExit(print, QUEUE_EXIT, (detail) => ({
      outcome: 'unreachable' as const,
      verb: asked.verb,
      session: f.session,
      detail,
    })),
  );
}
