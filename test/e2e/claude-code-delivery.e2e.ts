// D31, D32 end to end on the real Claude Code 2.1.332 against a mock Anthropic API on loopback,
// through a real relay (tokens file) and adapter: an instruction sent with delivery `queue` while
// a turn runs reaches the first model request of the next turn and none of the running one; one
// sent with delivery `steer` while a slow tool runs reaches the next request of the same turn (at
// PostToolUse), and with no turn running is refused `session-idle`; a withdrawn instruction never
// reaches the model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installClaudeCode } from '../../src/adapters/claude-code/installer.js';
import { adapterConfig, runAdapter, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { bodyHas, pollFor, strings, vendorMissing } from '../support/e2e-helpers.js';
import { claudeBinary, claudeWorkspace, runClaude, startClaude, type ClaudeWorkspace } from '../support/claude-cli.js';
import {
  bashThenText,
  startMockAnthropic,
  type MockAnthropic,
  type RecordedRequest,
} from '../support/mock-anthropic.js';

const ADAPTER_TOKEN = 'e2e-adapter-token';
const TOKEN = 'e2e-operator-token';
const SENDER = { agent: 'e2e-operator' };
const TOKENS_FILE = {
  tokens: [
    { token: ADAPTER_TOKEN, identity: 'e2e-claude-adapter', emit: ['claude-code'] },
    {
      token: TOKEN,
      identity: SENDER.agent,
      commands: ['x.claude-code.control.instruct', 'x.claude-code.control.withdraw'],
    },
  ],
};
const SESSION_HEADER = 'x-claude-code-session-id';

let mock: MockAnthropic;
let relay: RelayHandle;
let running: RunningAdapter;
let consumer: RelayConsumer;
let secret = '';
let stateDir = '';
const events: AepEvent[] = [];
const workspaces: ClaudeWorkspace[] = [];
const waitFor = pollFor(events);
const find = (session: string, type: string, cause?: string) =>
  events.find((e) => e.session === session && e.type === type && (cause === undefined || e.cause === cause));
const requestsOf = (session: string): RecordedRequest[] =>
  mock.messages().filter((r) => r.headers[SESSION_HEADER] === session);
const mentions = (r: RecordedRequest, text: string) => strings(r.body).some((x) => x.includes(text));

function workspace(): ClaudeWorkspace {
  const ws = claudeWorkspace();
  workspaces.push(ws);
  installClaudeCode({
    project: ws.project,
    port: running.adapter.port,
    secret,
    neutral: {},
    attentionTimeoutMs: 55_000,
    env: { AEP_STATE_DIR: stateDir },
  });
  return ws;
}

async function send(
  session: string,
  type: string,
  data: Record<string, unknown>,
  capture: 'redacted' | 'metadata' = 'redacted',
): Promise<AepCommand> {
  const cmd = command(SENDER, session, { type, data, capture });
  const s = await consumer.send(cmd);
  assert.is(s.outcome, 'accepted', `${type} settled ${JSON.stringify(s)}`);
  return cmd;
}

const binary = claudeBinary();
const missing = 'Claude Code 2.1.332 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh claude-code';

if (!vendorMissing(binary, 'claude-code', missing)) {
  test.before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'aep-cc-delivery-'));
    mock = await startMockAnthropic();
    const tokensFile = join(stateDir, 'tokens.json');
    writeFileSync(tokensFile, JSON.stringify(TOKENS_FILE), { mode: 0o600 });
    relay = await startRelay({ port: 0, storePath: ':memory:', tokens: loadTokensFile(tokensFile) });
    const cfg = adapterConfig(
      'claude-code',
      {
        port: '0',
        relay: relay.socketUrl,
        token: ADAPTER_TOKEN,
        instruct: true,
        log: join(stateDir, 'adapter.jsonl'),
        attentionTimeoutMs: '40000',
      },
      { AEP_STATE_DIR: stateDir },
    );
    secret = cfg.secret;
    running = await runAdapter(cfg, () => undefined);
    consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKEN, agent: SENDER.agent });
    await consumer.subscribe({}, { onEvent: (e) => events.push(e) });
  });

  test.after(async () => {
    await consumer?.close();
    await running?.close();
    await relay?.close();
    await mock?.close();
    for (const w of workspaces) rmSync(w.root, { recursive: true, force: true });
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  test('queue sent mid-turn reaches the first request of the next turn and none of the current one', async () => {
    const ws = workspace();
    mock.setScript(bashThenText(['echo hi'], 'Turn answered.'));
    const first = mock.hold((r) => r.raw.includes(ws.project));
    const cli = startClaude({ ws, mockUrl: mock.url });
    let cmd: AepCommand | undefined;
    let text = '';
    try {
      cli.sendUser('Say hi with bash.');
      const held = await first.arrived;
      const session = held.headers[SESSION_HEADER]!;
      await waitFor('session.started', () => find(session, 'session.started'));
      // Sent while the turn's first model request is in flight: PreToolUse, PostToolUse and Stop follow.
      text = `Next turn, mention STEER-QUEUE-${session.slice(0, 8)}.`;
      cmd = await send(session, 'x.claude-code.control.instruct', { text, delivery: 'queue' });
      first.release();
      const one = await cli.waitForLine((l) => l.type === 'result');
      await waitFor('run.finished', () => find(session, 'run.finished'));
      assert.not.ok(
        find(session, 'x.claude-code.instruction.delivered', cmd.id),
        'not delivered inside the running turn',
      );
      cli.sendUser('Second question.');
      await cli.waitForLine((l) => l.type === 'result' && l !== one);
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    const session = cmd!.session;
    const reqs = requestsOf(session);
    assert.ok(reqs.length >= 3, `two requests in turn one, one in turn two (${reqs.length})`);
    const turnTwo = reqs.findIndex((q) => bodyHas(q, 'Second question.'));
    assert.ok(turnTwo >= 2, 'the second turn comes after the tool round of the first');
    for (const q of reqs.slice(0, turnTwo))
      assert.not.ok(mentions(q, text), 'no request of the running turn carries it');
    assert.ok(
      bodyHas(reqs[turnTwo], `UserPromptSubmit hook additional context: ${text}`),
      "the next turn's first request carries it",
    );
    const d = await waitFor('delivered', () => find(session, 'x.claude-code.instruction.delivered', cmd!.id));
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['queue', 'UserPromptSubmit']);
  });

  test('steer sent while a slow tool runs reaches the same turn at PostToolUse; with no turn running it is refused session-idle', async () => {
    const ws = workspace();
    const gate = join(ws.root, 'steer.go');
    mock.setScript(bashThenText([`while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`], 'Turn answered.'));
    const first = mock.hold((r) => r.raw.includes(ws.project));
    const cli = startClaude({ ws, mockUrl: mock.url });
    let text = '';
    let cmd: AepCommand | undefined;
    try {
      cli.sendUser('Run the slow command.');
      const session = (await first.arrived).headers[SESSION_HEADER]!;
      first.release();
      // PreToolUse has been answered: the tool waits for the gate, and the next moment is PostToolUse.
      await waitFor('the slow tool call', () => find(session, 'tool.requested'));
      text = `Mid-turn, mention STEER-STEER-${session.slice(0, 8)}.`;
      cmd = await send(session, 'x.claude-code.control.instruct', { text, delivery: 'steer' });
      writeFileSync(gate, '');
      await cli.waitForLine((l) => l.type === 'result');
      const d = await waitFor('delivered', () => find(session, 'x.claude-code.instruction.delivered', cmd!.id));
      assert.equal([d.data?.['delivery'], d.data?.['moment']], ['steer', 'PostToolUse']);
      const finished = await waitFor('run.finished', () => find(session, 'run.finished'));
      const completed = find(session, 'tool.completed');
      assert.ok(completed && d.seq! < finished.seq!, 'inside the turn, before it finished');
      const reqs = requestsOf(session);
      assert.is(reqs.length, 2, 'one tool round: the steer started no turn of its own');
      assert.not.ok(mentions(reqs[0]!, text), 'not in the request that asked for the tool');
      assert.ok(bodyHas(reqs[1], 'TOOL_RAN'), "the next request carries the running tool's result");
      assert.ok(
        bodyHas(reqs[1], `PostToolUse:Bash hook additional context: ${text}`),
        "the same turn's next request carries it",
      );
      // The turn is over and the session still open: a steer now would start a turn.
      const data = { text: `${text}-LATE`, delivery: 'steer' };
      const late = await consumer.send(command(SENDER, session, { type: cmd.type, data, capture: 'redacted' }));
      const outcome = late.outcome === 'rejected' && [late.reason, late.code, late.ack['code']];
      assert.equal(outcome, ['refused', 'session-idle', 'session-idle'], JSON.stringify(late));
      assert.not.ok(find(session, 'session.ended'), 'refused as idle, not as ended');
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    assert.is(
      mock.messages().filter((q) => mentions(q, `${text}-LATE`)).length,
      0,
      'the refused steer reached nothing',
    );
  });

  test('a withdrawn instruction never reaches the model; the audit counts the withdrawal as its terminal', async () => {
    const ws = workspace();
    mock.setScript(bashThenText(['echo hi']));
    const first = mock.hold((r) => r.raw.includes(ws.project));
    const run = runClaude({ ws, mockUrl: mock.url, prompt: 'Say hi with bash.' });
    const held = await first.arrived;
    const session = held.headers[SESSION_HEADER]!;
    await waitFor('session.started', () => find(session, 'session.started'));
    const text = `Never read STEER-WITHDRAWN-${session.slice(0, 8)}.`;
    const cmd = await send(session, 'x.claude-code.control.instruct', { text });
    const w = await send(session, 'x.claude-code.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await waitFor('withdrawn', () => find(session, 'x.claude-code.instruction.dropped', w.id));
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    first.release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    const reqs = requestsOf(session);
    assert.ok(reqs.length >= 2, 'the tool round made a second request, after PreToolUse and PostToolUse');
    for (const q of reqs) assert.not.ok(mentions(q, text), 'no request carries the withdrawn text');
    await waitFor('session.ended', () => find(session, 'session.ended'));
    assert.not.ok(find(session, 'x.claude-code.instruction.delivered', cmd.id));
    const audit = await auditFiles([join(stateDir, 'adapter.jsonl')]);
    const rec = audit.instructions.find((i) => i.id === cmd.id)!;
    assert.equal([rec.status, rec.dropped?.reason], ['dropped', 'withdrawn']);
    assert.equal(
      audit.violations.filter((v) => v.message.includes(cmd.id)),
      [],
    );
  });
}

test.run();
