// Who decided (D46) and two keys for a risky yes (D48), on Claude Code 2.1.332 run headless against
// the mock model API in default permission mode, so each Bash call raises PermissionRequest. A
// permission is answered from the CLI, the console's page, a one-tap link and an orchestrator's
// MCP server: each `attention.resolved` names the relay-checked identity and the surface, on the
// stream, for a metadata watcher and in the audit of the adapter's log. Then the mock model asks
// for `git push --force`: one remote allow leaves the hook held, the push offers no Allow, a second
// identity's allow releases it; another one is denied from a link at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { parseTarget } from '../../src/notify/targets.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import { auditFiles } from '../../src/audit/audit.js';
import { validateEvent } from '../../src/protocol/validate.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import { bashThenText } from '../support/mock-anthropic.js';
import { startPushServer, type PushServer } from '../support/push-server.js';
import { respondVia } from '../support/tui.js';
import { startMcp, type McpClient } from '../mcp/support.js';

const RESPOND = 'control.attention.respond';
const e2e = e2eSuite('claude-code', {
  label: 'claude-code decided_by',
  access: {
    commands: [RESPOND],
    parties: { 'aep-steer-console': [RESPOND], bob: [RESPOND], orchestrator: [RESPOND], watcher: [] },
  },
  flags: { instruct: false, attentionTimeoutMs: '90000' },
});
let push: PushServer;
let konsole: ConsoleHandle;
let mcp: McpClient;
let ws: VendorWorkspace;
let watched: { e: AepEvent }[] = [];

/** A headless run whose one Bash call `command` is held; resolves once its request is on the stream. */
async function held(tag: string, command: string) {
  const from = e2e.stack.events.length;
  e2e.mock.setScript(bashThenText([command]));
  const run = e2e.run(ws, `${tag}: run it with bash.`, { bypassPermissions: false, killAfterMs: 150_000 });
  const requested = await e2e.stack.waitFor(
    `attention.requested (${tag})`,
    () => e2e.stack.events.slice(from).find((e) => e.type === 'attention.requested'),
    90_000,
  );
  return { requested, session: requested.session!, run };
}

const resolvedOf = (request: string) =>
  e2e.stack.waitFor(`attention.resolved of ${request}`, () =>
    e2e.stack.events.find((e) => e.type === 'attention.resolved' && e.subject === request),
  );

const pushOf = (request: string) => push.next((p) => String(p.body['click']).includes(`request=${request}`), 10_000);

async function ranAndDecided(h: Awaited<ReturnType<typeof held>>, file: string, by: Record<string, string>) {
  const r = await h.run;
  assert.is(r.code, 0, r.stderr);
  assert.ok(existsSync(join(ws.project, file)), `${file}: the command ran`);
  const resolved = await resolvedOf(h.requested.id);
  assert.equal((resolved.data as { decided_by?: unknown }).decided_by, by);
  return resolved;
}

if (e2e.installed) {
  test.before(async () => {
    push = await startPushServer();
    e2e.defer(() => push.close());
    konsole = await startConsole({
      relay: e2e.stack.relayUrl,
      token: e2e.stack.tokenOf('aep-steer-console'),
      port: 0,
      notify: [parseTarget(`ntfy:${push.url}/phone`)],
    });
    e2e.defer(() => konsole.close());
    await konsole.follower.ready;
    mcp = await startMcp([
      '--relay',
      e2e.stack.relayUrl,
      '--token',
      e2e.stack.tokenOf('orchestrator'),
      '--sender',
      'orchestrator',
    ]);
    e2e.defer(() => mcp.close());
    watched = await e2e.stack.watch('watcher');
    ws = await e2e.workspace({ attentionTimeoutMs: 90_000 });
  });

  test('a permission answered from the CLI, the console, a link and MCP each names who decided and through what', async () => {
    const cli = await held('cli', `touch ${join(ws.project, 'cli.txt')}`);
    const said = await e2e.respond(cli.session, cli.requested.id, 'allow');
    assert.is(said.code, RESPOND_EXIT.answered, said.out);
    await ranAndDecided(cli, 'cli.txt', { identity: 'e2e-operator', surface: 'cli' });

    const page = await held('console', `touch ${join(ws.project, 'console.txt')}`);
    const r = await fetch(`${konsole.localUrl}api/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session: page.session, request: page.requested.id, option: 'allow' }),
    });
    assert.is(((await r.json()) as { outcome: string }).outcome, 'answered');
    await ranAndDecided(page, 'console.txt', { identity: 'aep-steer-console', surface: 'console' });

    const link = await held('link', `touch ${join(ws.project, 'link.txt')}`);
    const n = await pushOf(link.requested.id);
    const allow = (n.body['actions'] as { label: string; url: string }[]).find((a) => a.label === 'Allow')!;
    assert.is((await fetch(allow.url, { method: 'POST' })).status, 200);
    await ranAndDecided(link, 'link.txt', { identity: 'aep-steer-console', surface: 'link' });

    const orchestrated = await held('mcp', `touch ${join(ws.project, 'mcp.txt')}`);
    const called = await mcp.call('respond', {
      session: orchestrated.session,
      request: orchestrated.requested.id,
      decision: 'allow',
    });
    assert.not.ok(called.isError, called.text);
    await ranAndDecided(orchestrated, 'mcp.txt', { identity: 'orchestrator', surface: 'mcp' });

    // A metadata watcher sees every decided_by; the audit of the adapter's log names each.
    const ends = e2e.stack.events.filter((e) => e.type === 'attention.resolved');
    for (const end of ends) {
      const low = await e2e.stack.waitFor('the watcher copy', () => watched.find((w) => w.e.id === end.id)?.e);
      assert.is(low.capture ?? 'metadata', 'metadata');
      assert.equal(low.data?.['decided_by'], end.data?.['decided_by']);
    }
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(
      audit.requests?.map((d) => `${d.decidedBy?.identity}/${d.decidedBy?.surface}`),
      ['e2e-operator/cli', 'aep-steer-console/console', 'aep-steer-console/link', 'orchestrator/mcp'],
    );
  });

  test('a force push: one remote allow keeps it held, the push offers no Allow, a second identity releases it', async () => {
    const forced = await held(
      'risky',
      `git push --force origin main || echo force-push-tried > ${join(ws.project, 'pushed.txt')}`,
    );
    assert.equal(forced.requested.data?.['risky'], {
      rule: 'force-push',
      why: "a force push rewrites a remote branch's history",
    });
    const low = await e2e.stack.waitFor(
      'the watcher copy',
      () => watched.find((w) => w.e.id === forced.requested.id)?.e,
    );
    assert.equal(low.data?.['risky'], forced.requested.data?.['risky'], 'the rule at metadata');
    assert.not.match(JSON.stringify(low), 'git push', 'never the command at metadata');

    const n = await pushOf(forced.requested.id);
    const labels = (n.body['actions'] as { label: string }[]).map((a) => a.label);
    assert.equal(labels, ['Deny', 'Open'], 'no one-tap allow');
    assert.match(String(n.body['message']), 'an allow needs two approvers');

    const first = await e2e.respond(forced.session, forced.requested.id, 'allow');
    assert.is(first.code, RESPOND_EXIT['pending-second'], first.out);
    assert.match(first.out, 'Needs a second approver');
    const again = await e2e.respond(forced.session, forced.requested.id, 'allow');
    assert.is(again.code, RESPOND_EXIT.rejected, again.out);
    assert.match(again.out, 'second-approver-same');
    const listed = await mcp.call('pending_requests', { session: forced.session });
    assert.match(listed.text, 'needs a second approver (first allow by e2e-operator via cli)');
    assert.not.ok(
      e2e.stack.events.some((e) => e.type === 'attention.resolved' && e.subject === forced.requested.id),
      'still held after one allow',
    );

    const bob = respondVia(e2e.stack.relayUrl, e2e.stack.tokenOf('bob'), 'bob');
    const second = await bob(forced.session, forced.requested.id, 'allow');
    assert.is(second.code, RESPOND_EXIT.answered, second.out);
    const resolved = await ranAndDecided(forced, 'pushed.txt', { identity: 'bob', surface: 'cli' });
    assert.equal(resolved.data?.['first_by'], { identity: 'e2e-operator', surface: 'cli' });
  });

  test("a risky request denied from the push's Deny settles at once, denied", async () => {
    const target = join(ws.project, 'never.txt');
    const forced = await held('risky-deny', `git push -f origin main; touch ${target}`);
    const n = await pushOf(forced.requested.id);
    const deny = (n.body['actions'] as { label: string; url: string }[]).find((a) => a.label === 'Deny')!;
    assert.is((await fetch(deny.url, { method: 'POST' })).status, 200);
    const resolved = await resolvedOf(forced.requested.id);
    assert.equal(resolved.data?.['decided_by'], { identity: 'aep-steer-console', surface: 'link' });
    const answered = e2e.stack.events.find((e) => e.type === 'attention.answered' && e.subject === forced.requested.id);
    assert.equal(answered?.data?.['answer'], { option: 'deny' });
    await forced.run;
    assert.not.ok(existsSync(target), 'the command never ran');
    // The whole log, with its pending-second ack and two-key resolution, breaks no rule and validates.
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(audit.violations, []);
    for (const e of e2e.stack.events.filter(
      (x) => x.data?.['decided_by'] !== undefined || x.data?.['risky'] !== undefined,
    ))
      assert.equal(validateEvent(e), [], `${e.type} validates with decided_by and risky beside its payload`);
    assert.equal(
      audit.requests?.slice(-2).map((d) => [d.risky, d.decidedBy?.identity, d.firstBy?.identity]),
      [
        ['force-push', 'bob', 'e2e-operator'],
        ['force-push', 'aep-steer-console', undefined],
      ],
    );
  });
}

test.run();
