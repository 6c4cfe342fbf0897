// D50, D34, D35 on the hook lane of the real GitHub Copilot CLI 1.0.102 against the loopback mock
// (BYOK): with the adapter's opt-in gate on (AEP_COPILOT_CONTROL=1), Copilot's permissionRequest
// hook is a held request naming the tool and its command; `aep-steer respond allow` lets the shell
// call run, `deny` makes Copilot give the model the denial instead of running it. The hook fires
// even under --allow-all (observed), so without the gate it is observed and never holds a call.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { e2eSuite } from '../support/e2e-stack.js';

const e2e = e2eSuite('copilot', { label: 'copilot hook permissions', env: { AEP_COPILOT_CONTROL: '1' } });

if (e2e.installed) {
  test('permissionRequest is held: allow runs the shell call, deny gives the model the denial instead of the run', async () => {
    const ws = await e2e.workspace();
    const { session, run } = await e2e.startRun(ws, '[[TURN]] [[TOOLS:2]] cp-perm run two commands', {
      bypassPermissions: false,
    });
    const held = (n: number) =>
      e2e.stack.waitFor(`permission request ${n}`, () => {
        const asked = e2e.stack.events.filter((e) => e.session === session && e.type === 'attention.requested');
        return asked[n - 1];
      });
    const first = await held(1);
    const asked = JSON.stringify(first.data);
    assert.is(first.data?.['kind'], 'permission', asked);
    assert.ok(/use bash: echo TOOL_RAN_\d+/.test(asked), `names the tool and its command (D35): ${asked}`);
    assert.is((await e2e.respond(session, first.id, 'allow')).code, 0);
    const second = await held(2);
    assert.is((await e2e.respond(session, second.id, 'deny')).code, 0);
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const outputs = e2e.toolOutputs('cp-perm');
    assert.ok(
      outputs.some((o) => /TOOL_RAN_\d+\\n<shellId/.test(o)),
      `the allowed call ran: ${outputs.join(' | ')}`,
    );
    assert.ok(
      outputs.some(
        (o) =>
          o.includes('Permission denied by a PermissionRequest hook: The operator denied this') &&
          !o.includes('<shellId'),
      ),
      `the denied call did not run, and Copilot says why: ${outputs.join(' | ')}`,
    );
    for (const r of [first, second])
      assert.ok(
        e2e.stack.find(session, 'attention.answered', r.id) ??
          e2e.stack.events.find((e) => e.type === 'attention.answered' && e.subject === r.id),
        'each answer is recorded',
      );
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(e2e.stack.errors, []);
  });
}

test.run();
