// `aep-steer cancel`: stops the turn a session is running (D33, `control.cancel {scope:"run"}`)
// where its lane can (Cline's hub, Codex's app-server), settled on the agent's `run.cancelled`.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import { refusedLine, toolList } from '../consumer/explain.js';
import { CLI_VOICE, refusalSentence } from '../consumer/next-step.js';
import type { CancelOutcome } from '../consumer/cancel.js';
import { withConsumer } from '../consumer/connect.js';
import { SEND_EXIT } from './usage.js';
import { relayVerb, outcomePrinter, timeoutFlag, sessionVerb, sessionUnreachable } from './relay-options.js';
import type { RelayFlags, SessionVerb, VerbIo } from './relay-options.js';

export const CANCEL_EXIT = { cancelled: 0, ...SEND_EXIT } as const;

const CANCEL_VERB: SessionVerb = {
  name: 'cancel',
  description: "stop the turn a session is running, where its agent's lane can (control.cancel, scope run)",
  session: 'the session',
  exits:
    '\nExit codes: 0 stopped, 2 usage, 3 rejected (no turn running, a cancel under way), 4 refused (the session takes no\ncancel: its adapter declares none, or it runs on the hook lane only, as a plain `codex` or `claude` in a terminal\ndoes), 6 timeout, 7 relay unreachable, 8 the relay refused the token.',
};

/**
 * The exit code of an outcome. An adapter's `unsupported` (no lane that can stop the session's
 * turn reaches it, D33: a plain `codex` or `claude` in a terminal) is the session taking no
 * cancel, as the roster's refusal is: 4.
 */
export const cancelExit = (o: CancelOutcome): number =>
  o.outcome === 'rejected' && o.reason === 'unsupported' ? CANCEL_EXIT.refused : CANCEL_EXIT[o.outcome];

export function describeCancel(o: CancelOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'cancelled': {
      // D33: what the agent left running is said, never passed over as stopped.
      const { leftRunning = [], killed = [] } = o;
      const lines = [`${p.green('✓')} the running turn was stopped (event ${o.cancelled})`];
      if (killed.length > 0) lines.push(`  and the tool processes it left were ended: ${toolList(killed)}`);
      if (leftRunning.length > 0)
        lines.push(`${p.yellow('!')} the agent left these running: ${toolList(leftRunning)}; ${CLI_VOICE.killTools}`);
      return lines.join('\n');
    }
    case 'rejected':
      return `${p.red('✗')} not stopped (${o.code ?? o.reason}): ${refusalSentence(o.code, CLI_VOICE, o)}; the turn goes on`;
    case 'refused':
      return refusedLine(o, p);
    case 'timeout':
      return o.stage === 'ack'
        ? `${p.yellow('…')} timeout: no ack from the session; nothing says the turn stopped: ${CLI_VOICE.events(o.session)}`
        : `${p.yellow('…')} accepted, but the agent has not reported the turn stopped yet; \`aep-steer watch --session ${o.session}\` follows it`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

interface CancelFlags extends RelayFlags {
  session: string;
  run?: string;
  json?: boolean;
  timeout: string;
  killTools?: boolean;
  clear?: boolean;
}

export async function runCancel(f: CancelFlags, io: VerbIo): Promise<number> {
  const timeoutMs = timeoutFlag('cancel', f.timeout, io.err);
  if (timeoutMs === undefined) return CANCEL_EXIT.usage;
  const { print } = outcomePrinter(f.json, io.out, describeCancel);
  const { sendCancel } = await import('../consumer/cancel.js');
  return withConsumer(
    f,
    async (consumer) => {
      // D33 `kill_tools`: the lane also ends the tool processes the agent would leave running.
      const req: Parameters<typeof sendCancel>[2] = {
        session: f.session,
        timeoutMs,
        ...(f.run ? { run: f.run } : {}),
        ...(f.killTools === true ? { killTools: true } : {}),
        ...(f.clear === true ? { clear: true } : {}),
      };
      const o = await sendCancel(consumer, f, req);
      print(o);
      return cancelExit(o);
    },
    sessionUnreachable(print, CANCEL_EXIT, f.session),
  );
}

export function registerCancel(program: Command): void {
  const cmd = sessionVerb(program, CANCEL_VERB)
    .option('--run <id>', "the run to stop; the session's running one when absent")
    .option('--timeout <ms>', 'give up waiting for the agent to report the turn stopped after this long', '30000')
    .option(
      '--kill-tools',
      'also end the tool processes (shell commands) the agent would leave running, where its lane can (the Codex app-server)',
    )
    .option('--clear', "also withdraw everything waiting in the session's queue, each dropped withdrawn (D44)")
    .option('--json', 'print the outcome as one JSON object');
  relayVerb(cmd, CANCEL_VERB.exits, runCancel);
}
