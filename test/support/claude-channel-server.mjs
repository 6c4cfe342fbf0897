#!/usr/bin/env node
// A Claude Code channel for tests: a stdio MCP server that declares the `claude/channel`
// capability and pushes `notifications/claude/channel {content, meta}` for each file dropped into
// <dir>/inbox. It keeps a log of every line in and out (<dir>/log.jsonl), so a test waits on what
// the channel saw instead of on time. Plain Node and hand-written JSON-RPC: the MCP SDK would
// negotiate its own protocol era, and the era is one of the checks Claude Code applies to channels.
//
// Usage (as an MCP server command): node claude-channel-server.mjs <dir>
// After each notification it sends a `ping` request: the client answers requests in the order it
// reads the pipe, so the answer proves the notification before it was read (logged as `acked`).
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, watch } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: claude-channel-server.mjs <dir>\n');
  process.exit(2);
}
const inbox = join(dir, 'inbox');
const sent = join(dir, 'sent');
mkdirSync(inbox, { recursive: true });
mkdirSync(sent, { recursive: true });
const logFile = join(dir, 'log.jsonl');
const log = (entry) => appendFileSync(logFile, `${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`);

// An era with unsolicited notifications (2025-06-18); a modern revision would be skipped earlier.
const PROTOCOL = '2025-06-18';
let initialized = false;
let pings = 0;
/** ping id -> the inbox file whose notification it follows. */
const awaiting = new Map();

const send = (msg) => {
  log({ dir: 'out', msg });
  process.stdout.write(`${JSON.stringify(msg)}\n`);
};

function deliver() {
  if (!initialized) return; // files dropped early wait for the client's `initialized`
  for (const name of readdirSync(inbox).sort()) {
    if (name.startsWith('.')) continue; // a test writes `.name` and renames it in, so no half-written file is read
    const from = join(inbox, name);
    let content;
    try {
      content = readFileSync(from, 'utf8');
      renameSync(from, join(sent, name));
    } catch {
      continue; // taken by an earlier pass
    }
    send({ jsonrpc: '2.0', method: 'notifications/claude/channel', params: { content, meta: { file: name } } });
    const id = `ping-${++pings}`;
    awaiting.set(id, name);
    send({ jsonrpc: '2.0', id, method: 'ping' });
  }
}

function onMessage(msg) {
  log({ dir: 'in', msg });
  if (msg.method === undefined && msg.id !== undefined) {
    const file = awaiting.get(msg.id);
    if (file !== undefined) {
      awaiting.delete(msg.id);
      log({ event: 'acked', file });
    }
    return;
  }
  if (msg.method === 'initialize') {
    send({
      jsonrpc: '2.0',
      id: msg.id,
      result: {
        protocolVersion: PROTOCOL,
        capabilities: { experimental: { 'claude/channel': {} } },
        serverInfo: { name: 'aep-test-channel', version: '0.0.0' },
      },
    });
    return;
  }
  if (msg.method === 'notifications/initialized') {
    initialized = true;
    log({ event: 'initialized' });
    deliver();
    return;
  }
  if (msg.id === undefined) return; // other notifications need no answer
  if (msg.method === 'ping') send({ jsonrpc: '2.0', id: msg.id, result: {} });
  else send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
}

let partial = '';
process.stdin.on('data', (chunk) => {
  partial += chunk.toString('utf8');
  const lines = partial.split('\n');
  partial = lines.pop() ?? '';
  for (const line of lines) {
    if (line.trim() === '') continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      log({ event: 'unparsed', line });
      continue;
    }
    onMessage(msg);
  }
});

const watcher = watch(inbox, () => deliver());
function end(why) {
  watcher.close();
  log({ event: 'ended', why });
  process.exit(0);
}
// The client closing the pipe (Claude exiting) ends the server: nothing of it stays behind.
process.stdin.on('end', () => end('stdin closed'));
process.on('SIGTERM', () => end('SIGTERM'));
process.on('SIGINT', () => end('SIGINT'));
// A write after Claude went away (EPIPE) ends the server too.
process.stdout.on('error', () => end('stdout closed'));
log({ event: 'started', pid: process.pid, protocol: PROTOCOL });
