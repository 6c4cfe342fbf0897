// Claude Code Channels, pinned: the one way into Claude Code's interactive TUI from outside is a
// channel (an MCP server that declares `claude/channel` and sends `notifications/claude/channel`),
// and 2.1.332 keeps it shut behind a server-delivered feature flag that an API key cannot open.
// The real CLI runs in tmux against the loopback mock model with a development channel loaded
// (`--dangerously-load-development-channels server:<name>`); a notification pushed to the idle
// session must be dropped and must reach no model request, while a typed prompt still does.
// When a future version lets the notification through, this file fails: that is the signal that
// the wake lane for an idle session (issue "Wake an idle session", D43) can be built. The gate and
// its evidence: docs/vendors.md, "Channels".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeEnv, type ClaudeWorkspace } from '../support/claude-cli.js';
import { strings, vendorBinary, vendorMissing, workspace } from '../support/vendor-e2e.js';
import { startMockAnthropic, type MockAnthropic, type RecordedRequest } from '../support/mock-anthropic.js';
import { startTui, tmuxMissing, type Tui } from '../support/tui.js';

const SERVER = 'aep-channel';
const CHANNEL_TEXT = 'CHANNEL-WAKE-1 please reply with the word kiwi';
const PROMPT = 'BASELINE-PROMPT say the word plum';
const ANSWER = 'Plum, as asked.';
const channelServer = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'claude-channel-server.mjs');
// What a future version that opens Channels reads when this file fails.
const OPENED =
  'Claude Code now lets a channel notification through: Channels are open, and the lane that wakes an idle session ' +
  '(issue "Wake an idle session", D43) can now be built. Update docs/vendors.md ("Channels") and turn this test around.';
// The machine may be busy: every wait is for an event, with room to spare.
const LIMIT_MS = 180_000;

let mock: MockAnthropic;
let ws: ClaudeWorkspace;
let tui: Tui | undefined;
let chanDir = '';
let debugFile = '';

const readText = (file: string): string => (existsSync(file) ? readFileSync(file, 'utf8') : '');
const debugLines = (): string[] => readText(debugFile).split('\n');
/** This server's lines in Claude's debug log. */
const serverLines = (): string[] => debugLines().filter((l) => l.includes(`MCP server "${SERVER}"`));
type ChannelEntry = { event?: string; pid?: number; why?: string; file?: string; dir?: string; msg?: unknown };
/** The channel server's log; a line still being written is read on the next poll. */
const channelLog = (): ChannelEntry[] =>
  readText(join(chanDir, 'log.jsonl'))
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => JSON.parse(l) as ChannelEntry);

/** Polls until `probe` gives a value; a miss names what never happened and shows what was there. */
async function eventually<T>(what: string, probe: () => T | undefined, seen: () => string): Promise<T> {
  const until = Date.now() + LIMIT_MS;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`never saw ${what}; there was:\n${seen()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const tail = (lines: string[]) => lines.slice(-40).join('\n');

const textOfRequest = (r: RecordedRequest): string => strings(r.body).join('\n');
const alive = (pid: number): boolean => {
  const stat = readText(`/proc/${pid}/stat`);
  return stat !== '' && !/\) Z /.test(stat);
};
/** The parent of a process (Claude's for the channel server, the tmux server's for Claude). */
const parentOf = (pid: number): number => Number(readText(`/proc/${pid}/stat`).split(') ')[1]?.split(' ')[1]);

const binary = vendorBinary('claude-code');
const missing =
  'Claude Code 2.1.332 is not installed in .vendor-clis (run scripts/install-vendor-cli.sh claude-code), or tmux is missing (apt-get install tmux)';

if (!vendorMissing(tmuxMissing() ? undefined : binary, 'claude-channels', missing)) {
  let serverPid = 0;
  let claudePid = 0;
  let tmuxPid = 0;

  test.before(async () => {
    const version = spawnSync(binary!, ['--version'], { encoding: 'utf8' }).stdout.trim();
    console.log(`  claude --version: ${version}`);
    mock = await startMockAnthropic({ script: () => ({ content: [{ type: 'text', text: ANSWER }] }) });
    ws = workspace('aep-channels-');
    chanDir = join(ws.root, 'channel');
    debugFile = join(ws.root, 'claude-debug.log');
    // Onboarding, folder trust and the key answered as a person once would; the channel is a
    // user-scope MCP server, which needs no approval.
    writeFileSync(
      join(ws.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: 'dark',
        customApiKeyResponses: { approved: ['sk-ant-test'.slice(-20)], rejected: [] },
        projects: { [ws.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
        mcpServers: { [SERVER]: { type: 'stdio', command: process.execPath, args: [channelServer, chanDir] } },
      }),
    );
    tui = startTui('claude-channels', ws.project, claudeEnv(ws, mock.url), [
      binary!,
      '--model',
      'claude-sonnet-4-5',
      '--debug-file',
      debugFile,
      '--dangerously-load-development-channels',
      `server:${SERVER}`,
    ]);
  });

  test.after(async () => {
    tui?.kill();
    if (serverPid > 0 && alive(serverPid)) process.kill(serverPid, 'SIGTERM');
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test(`Claude Code 2.1.332 drops a development channel's notification to an idle session ("Channels are not currently available"); if this fails, the Channels lane can now be built`, async () => {
    // The channel connects: the server saw `initialized`, and Claude logged the connection.
    const started = await eventually(
      'the channel server start',
      () => channelLog().find((e) => e.event === 'started'),
      () => readText(join(chanDir, 'log.jsonl')),
    );
    serverPid = started.pid!;
    claudePid = parentOf(serverPid);
    assert.match(readText(`/proc/${claudePid}/cmdline`), 'claude', 'Claude spawned the channel server');
    tmuxPid = parentOf(claudePid);
    assert.match(readText(`/proc/${tmuxPid}/cmdline`), 'tmux', 'Claude runs in the tmux server this test started');
    await eventually(
      'the channel initialized',
      () => channelLog().some((e) => e.event === 'initialized'),
      () => readText(join(chanDir, 'log.jsonl')),
    );
    const connected = await eventually(
      `Claude's "Connection established" for ${SERVER}`,
      () => serverLines().find((l) => l.includes('Connection established')),
      () => tail(debugLines()),
    );
    // The gate's verdict on the server, logged once on connection: registered or skipped (why).
    const verdict = await eventually(
      'the channel gate verdict',
      () => serverLines().find((l) => /Channel notifications (registered|skipped)/.test(l)),
      () => tail(serverLines()),
    );
    console.log(`  ${connected.slice(connected.indexOf('MCP server'))}`);
    console.log(`  ${verdict.slice(verdict.indexOf('MCP server'))}`);
    assert.ok(
      connected.includes('"protocolEra":"legacy"'),
      `a legacy-era connection, past the era check: ${connected}`,
    );
    // "registered" is the future this file waits for; a skip for another reason means the setup
    // no longer reaches the flag check, which says nothing about the flag.
    assert.not.ok(verdict.includes('Channel notifications registered'), `${OPENED}\nThe gate said: ${verdict}`);
    assert.ok(
      verdict.includes('Channel notifications skipped: channels feature is not currently available'),
      `the gate skipped the channel before or after the feature flag, not at it: ${verdict}`,
    );
    await tui!.shows('? for shortcuts', LIMIT_MS);
    // The startup notice for the ignored flag; 2.1.332 folds it under "ctrl+o to expand" when
    // there is more than one notice (here also the debug file's).
    const NOTICE = 'Channels are not currently available';
    const folded = await eventually(
      'the startup notices',
      () =>
        tui!.screen().includes(NOTICE) ? 'open' : tui!.screen().includes('ctrl+o to expand') ? 'folded' : undefined,
      () => tui!.screen(),
    );
    if (folded === 'folded') tui!.keys('C-o');
    await tui!.shows(NOTICE, LIMIT_MS);
    const notices = tui!
      .screen()
      .split('\n')
      .filter((l) => l.includes(NOTICE) || l.includes('channels ignored'))
      .map((l) => l.trim());
    console.log(`  the TUI: ${notices.join(' | ')}`);
    assert.ok(
      notices.includes(`--dangerously-load-development-channels ignored (server:${SERVER})`),
      `${OPENED}\nThe TUI shows:\n${tui!.screen()}`,
    );
    if (folded === 'folded') tui!.keys('C-o');

    // Push a notification to the idle session; the ping after it is answered once Claude read it.
    const name = 'wake-1.txt';
    writeFileSync(join(chanDir, 'inbox', `.${name}`), CHANNEL_TEXT);
    renameSync(join(chanDir, 'inbox', `.${name}`), join(chanDir, 'inbox', name));
    await eventually(
      'Claude reading the channel notification (its answer to the ping behind it)',
      () => channelLog().some((e) => e.event === 'acked' && e.file === name),
      () => readText(join(chanDir, 'log.jsonl')),
    );
    assert.not.ok(
      serverLines().some((l) => l.includes('notifications/claude/channel (')),
      `${OPENED}\nClaude logged the channel message as received.`,
    );

    // A typed prompt reaches the mock and is answered: the TUI and the mock work, so the silence
    // above is Claude's. A delivered channel message, queued ahead of it, would be in this request
    // or one before it.
    await tui!.submit(PROMPT);
    const asked = await eventually(
      'the typed prompt at the mock',
      () => mock.messages().find((r) => textOfRequest(r).includes('BASELINE-PROMPT')),
      () =>
        mock
          .messages()
          .map((r) => `#${r.index} ${textOfRequest(r).slice(0, 200)}`)
          .join('\n'),
    );
    await tui!.shows(ANSWER, LIMIT_MS);
    const carried = mock.messages().filter((r) => textOfRequest(r).includes('CHANNEL-WAKE-1'));
    assert.equal(
      carried.map((r) => r.index),
      [],
      `${OPENED}\nThe channel text reached the model in request(s) ${carried.map((r) => `#${r.index}`).join(', ')}`,
    );
    const users = (asked.body?.messages ?? []).filter((m) => m.role === 'user');
    assert.is(users.length, 1, 'the prompt opens the conversation: no channel turn before it');
    assert.ok(
      strings(users[0]!.content).some((s) => s.includes(PROMPT)),
      'the request carries the typed prompt',
    );
    assert.not.ok(
      strings(users[0]!.content).some((s) => s.includes('<channel')),
      `${OPENED}\nA channel block rode along with the prompt.`,
    );
  });

  test('nothing stays behind: the tmux server is killed, which ends Claude, and Claude ending ends the channel server', async () => {
    assert.ok(serverPid > 0 && claudePid > 0 && tmuxPid > 0, 'all three processes were seen');
    tui!.kill();
    tui = undefined;
    await eventually(
      'the tmux server exiting',
      () => !alive(tmuxPid),
      () => `pid ${tmuxPid}: ${readText(`/proc/${tmuxPid}/cmdline`)}`,
    );
    await eventually(
      'Claude exiting',
      () => !alive(claudePid),
      () => `pid ${claudePid}: ${readText(`/proc/${claudePid}/cmdline`)}`,
    );
    const ended = await eventually(
      'the channel server ending',
      () => channelLog().find((e) => e.event === 'ended'),
      () => readText(join(chanDir, 'log.jsonl')),
    );
    console.log(`  the channel server ended (${ended.why})`);
    await eventually(
      'the channel server process gone',
      () => !alive(serverPid),
      () => `pid ${serverPid}`,
    );
  });
}

test.run();
