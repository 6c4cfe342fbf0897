// An agent steering an agent, for real: an orchestrator `claude -p` (Claude Code 2.1.332) with
// `aep-steer mcp` in its project's .mcp.json (written by `aep-steer install mcp claude-code`),
// and a worker `claude -p` whose hooks go to this project's adapter. Both CLIs talk to one mock
// Anthropic API on loopback; the orchestrator's mock model is scripted to call the `instruct`
// tool with the worker's session id, twice with the same idempotency key. The relay runs with a
// tokens file: the adapter, the orchestrator's server and the test's observer each have their own
// token, and the orchestrator's commands carry its token's identity (D19).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { dedupeKey } from '../../src/protocol/index.js';
import { sessionHistory } from '../../src/consumer/history.js';
import { installMcp } from '../../src/mcp/install.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas, strings, vendorBinary, workspace, vendorMissing } from '../support/vendor-e2e.js';
import {
  bashThenText,
  toolResultCount,
  type MessagesBody,
  type RecordedRequest,
  type Turn,
} from '../support/mock-anthropic.js';

const TOOL = 'mcp__aep-steer__instruct';
// The suite's own consumer observes at full capture; the orchestrator's server holds a token of its own.
const e2e = e2eSuite('claude-code', {
  label: 'mcp-orchestrator',
  access: {
    commands: [],
    capture: 'full',
    parties: { orchestrator: ['x.*.control.instruct'] },
  },
  flags: { attentionTimeoutMs: '40000' },
});

/** The tool results the orchestrator's CLI put into its model request, in order. */
function toolResults(body: MessagesBody | undefined): { tool_use_id: string; text: string; is_error?: boolean }[] {
  const out: { tool_use_id: string; text: string; is_error?: boolean }[] = [];
  for (const m of body?.messages ?? []) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const b of m.content as Record<string, unknown>[]) {
      if (b['type'] !== 'tool_result') continue;
      const c = b['content'];
      const text = typeof c === 'string' ? c : strings(c).join('');
      out.push({ tool_use_id: String(b['tool_use_id']), text, ...(b['is_error'] === true ? { is_error: true } : {}) });
    }
  }
  return out;
}

/** The tool's structured content as the CLI passed it on, without the reminder it appends. */
const resultJson = (text: string): string => text.split(/\n\s*<system-reminder>/)[0]!.trim();

if (e2e.installed) {
  test('an orchestrator claude -p steers a worker claude -p through the instruct tool; the same key twice is one delivery', async () => {
    const worker = await e2e.workspace({ attentionTimeoutMs: 40_000 });
    // The orchestrator's project has the MCP server only, no hooks.
    const lead = await e2e.workspace({ hooks: false });
    const tokenFile = join(lead.root, 'orchestrator-token');
    writeFileSync(tokenFile, `${e2e.stack.tokenOf('orchestrator')}\n`, { mode: 0o600 });
    const installed = installMcp('claude-code', { project: lead.project, relay: e2e.stack.relayUrl, tokenFile });
    assert.ok(installed.changed);

    // Claude Code itself reads the entry the installer wrote.
    const got = spawnSync(e2e.binary, ['mcp', 'get', 'aep-steer'], {
      cwd: lead.project,
      env: {
        PATH: process.env.PATH,
        HOME: lead.home,
        IS_SANDBOX: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.match(`${got.stdout}${got.stderr}`, 'aep-steer');
    assert.match(`${got.stdout}${got.stderr}`, 'mcp');

    const text = 'Stop refactoring; first make the failing test in parser.test.ts pass. Marker ORCH-7.';
    let workerSession = '';
    const isLead = (r: RecordedRequest) => r.raw.includes(lead.project);
    const leadScript = (body: MessagesBody): Turn => {
      const n = toolResultCount(body);
      if (n < 2) {
        // The orchestrator's model decides to steer the worker, then retries with the same key.
        return {
          content: [
            {
              type: 'tool_use',
              name: TOOL,
              input: { session: workerSession, text, idempotency_key: 'redirect-parser-1', wait_ms: 60_000 },
            },
          ],
          stop_reason: 'tool_use',
        };
      }
      return { content: [{ type: 'text', text: 'The worker has the instruction.' }], stop_reason: 'end_turn' };
    };
    const workerScript = bashThenText(['echo working on the parser']);
    e2e.mock.setScript((body, r) => (isLead(r) ? leadScript(body) : workerScript(body, r)));

    // The worker starts and its first model request is held: it is live on the relay, mid-turn.
    const started = await e2e.startHeld(worker, 'Refactor the parser module.', (r) => r.raw.includes(worker.project), {
      killAfterMs: 120_000,
    });
    workerSession = started.session;

    // The orchestrator runs; its MCP server sends the instruction and holds the tool result.
    const leadRun = e2e.run(lead, 'Check on the worker session and redirect it to the failing parser test.', {
      killAfterMs: 120_000,
    });
    const cmd = await e2e.stack.waitFor('the instruct command', () =>
      e2e.stack.events.find((e) => e.session === workerSession && e.type === 'x.claude-code.control.instruct'),
    );
    await e2e.stack.waitFor('control.accepted', () =>
      e2e.stack.events.find((e) => e.type === 'control.accepted' && e.cause === cmd.id),
    );
    assert.is(cmd.agent, 'orchestrator', "the command names the orchestrator token's identity");
    // The orchestrator is still waiting on its tool call: one model request so far.
    assert.is(e2e.requests().filter(isLead).length, 1);

    // The worker goes on: its tool call's PreToolUse hook carries the instruction.
    started.release();
    const w = await started.run;
    assert.is(w.code, 0, w.stderr);
    const workerReqs = e2e.requestsIn(workerSession);
    assert.ok(workerReqs.length >= 2, `worker made ${workerReqs.length} model requests`);
    assert.not.ok(bodyHas(workerReqs[0]?.body, text), 'the held request predates the instruction');
    assert.ok(
      bodyHas(workerReqs[1]?.body, `PreToolUse:Bash hook additional context: ${text}`),
      "the worker's next model request carries the instruction",
    );

    const o = await leadRun;
    assert.is(o.code, 0, o.stderr);
    const leadReqs = e2e.requests().filter(isLead);
    assert.is(leadReqs.length, 3, 'tool call, retried tool call, final answer');
    const delivered = e2e.stack.events.find(
      (e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === cmd.id,
    )!;
    assert.ok(delivered, 'delivered on the stream');

    // The orchestrator's next model request carries the tool result: delivered, with the stream facts.
    const [first] = toolResults(leadReqs[1]!.body);
    assert.ok(first, "a tool result in the orchestrator's second request");
    assert.not.ok(first!.is_error);
    const facts = JSON.parse(resultJson(first!.text)) as Record<string, unknown>;
    assert.is(facts['outcome'], 'delivered');
    assert.match(String(facts['message']), /^Delivered after \d+ ms in the queue/);
    assert.is(facts['command_id'], cmd.id);
    assert.is(facts['delivered_id'], delivered.id);
    assert.is(facts['delivered_at'], delivered.time);
    assert.is(facts['queued_ms'], (delivered.data as { queued_ms: number }).queued_ms);
    assert.is(facts['moment'], 'PreToolUse', 'the moment whose hook reply carried it (D27)');
    assert.is(facts['session'], workerSession);

    // Idempotency: the retry with the same key is the same command; one delivery, the same result.
    const results = toolResults(leadReqs[2]!.body);
    assert.is(results.length, 2);
    assert.is(resultJson(results[1]!.text), resultJson(results[0]!.text), 'the second call returns the same result');
    // The retry was forwarded again under the same id (the adapter answered with its recorded ack);
    // the relay's history keeps one command and one delivery.
    assert.equal(
      [
        ...new Set(
          e2e.stack.events
            .filter((e) => e.type === 'x.claude-code.control.instruct' && e.session === workerSession)
            .map((e) => e.id),
        ),
      ],
      [cmd.id],
    );
    const history = await sessionHistory(e2e.stack.consumer, {
      session: workerSession,
      limit: 500,
      capture: 'metadata',
    });
    assert.is(
      history.filter((e) => e.type === 'x.claude-code.control.instruct').length,
      1,
      'one command in the relay history',
    );
    assert.is(
      history.filter((e) => e.type === 'x.claude-code.instruction.delivered').length,
      1,
      'one delivery in the relay history',
    );
    // A consumer may see an event twice (redelivery); it is one event per (source, id) (AEP-0001 §5.3).
    assert.is(
      new Set(
        e2e.stack.events
          .filter((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === cmd.id)
          .map(dedupeKey),
      ).size,
      1,
      'delivered once',
    );
    assert.is(
      workerReqs.filter(
        (r, i) =>
          i > 0 &&
          bodyHas(r.body, `hook additional context: ${text}`) &&
          !bodyHas(workerReqs[i - 1]?.body, `hook additional context: ${text}`),
      ).length,
      1,
      'the text arrived in one hook reply',
    );
  });
}

const codex = vendorBinary('codex');
if (
  !vendorMissing(
    codex,
    'mcp-orchestrator (codex config)',
    'Codex 0.171.0 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh codex',
  )
) {
  test('Codex 0.171.0 reads the server entry `install mcp codex` wrote, with the tool timeout', () => {
    const ws = workspace('aep-codex-mcp-');
    try {
      const home = join(ws.home, '.codex');
      const r = installMcp('codex', {
        relay: 'ws://127.0.0.1:8787/socket',
        tokenFile: join(ws.root, 'token'),
        env: { HOME: ws.home, CODEX_HOME: home },
      });
      assert.is(r.file, join(home, 'config.toml'));
      const got = spawnSync(codex!, ['mcp', 'get', 'aep-steer', '--json'], {
        cwd: ws.project,
        env: { PATH: process.env.PATH, HOME: ws.home, CODEX_HOME: home, RUST_LOG: 'warn' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.is(got.status, 0, got.stderr);
      const entry = JSON.parse(got.stdout) as {
        enabled: boolean;
        tool_timeout_sec: number;
        transport: { type: string; command: string; args: string[] };
      };
      assert.is(entry.enabled, true);
      assert.is(entry.tool_timeout_sec, 660);
      assert.is(entry.transport.type, 'stdio');
      assert.is(entry.transport.command, process.execPath);
      assert.equal(entry.transport.args.slice(1), [
        'mcp',
        '--relay',
        'ws://127.0.0.1:8787/socket',
        '--token-file',
        join(ws.root, 'token'),
      ]);
    } finally {
      rmSync(ws.root, { recursive: true, force: true });
    }
  });
}

test.run();
