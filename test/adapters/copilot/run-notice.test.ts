// `aep-steer run copilot` in a project whose hooks are missing or whose folder Copilot does not
// trust: the session it hosts would not show on the stream, so the run says why and what to do
// before it starts anything, and goes on; with the hooks installed in a trusted folder it says nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { copilotInstaller } from '../../../src/adapters/copilot/installer.js';
import { runCopilot } from '../../../src/adapters/copilot/server/run.js';
import { hostedStreamNotice } from '../../../src/adapters/copilot/server/stream-notice.js';

let root = '';
let project = '';
const env = (): NodeJS.ProcessEnv => ({ HOME: root, AEP_STATE_DIR: join(root, 'state') });
const trust = () => {
  mkdirSync(join(root, '.copilot'), { recursive: true });
  writeFileSync(
    join(root, '.copilot', 'config.json'),
    `// written by copilot\n${JSON.stringify({ trustedFolders: [project] })}`,
  );
};
const install = () =>
  copilotInstaller.install({ project, port: 18395, secret: 's', neutral: {}, attentionTimeoutMs: 55_000, env: env() });

test.before.each(() => {
  root = mkdtempSync(join(tmpdir(), 'aep-copilot-notice-'));
  project = join(root, 'proj');
  mkdirSync(project);
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

test('no hooks and an untrusted folder: both said, each with its fix', () => {
  const n = hostedStreamNotice(project, env()) ?? '';
  assert.match(n, 'will not appear on the stream');
  assert.match(n, `${join(project, '.github', 'hooks', 'aep-steer.json')} is missing`);
  assert.match(n, `aep-steer install copilot --project ${project}`);
  assert.match(n, 'is not trusted by Copilot CLI');
  assert.match(n, 'trustedFolders');
});

test('hooks installed but the folder untrusted: only the trust is said', () => {
  install();
  const n = hostedStreamNotice(project, env()) ?? '';
  assert.not.match(n, 'not installed');
  assert.match(n, 'is not trusted by Copilot CLI');
});

test('trusted but no hooks: only the install is said', () => {
  trust();
  const n = hostedStreamNotice(project, env()) ?? '';
  assert.match(n, 'not installed');
  assert.not.match(n, 'not trusted');
});

test('hooks installed in a trusted folder (or COPILOT_ALLOW_ALL): nothing to say', () => {
  install();
  assert.is(hostedStreamNotice(project, { ...env(), COPILOT_ALLOW_ALL: 'true' }), undefined);
  trust();
  assert.is(hostedStreamNotice(project, env()), undefined);
});

test('run copilot says it first, then goes on (here to the adapter it cannot join)', async () => {
  const err = new PassThrough();
  let said = '';
  err.on('data', (d: Buffer) => (said += d.toString()));
  const code = await runCopilot(
    '/nonexistent/copilot',
    ['-p', 'hello'],
    join(root, 'state', 'copilot', 'server.sock'),
    project,
    { ...env(), COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:9/v1', COPILOT_MODEL: 'm' },
    { in: new PassThrough(), out: new PassThrough(), err },
  );
  assert.is(code, 4);
  const lines = said.trim().split('\n');
  assert.match(lines[0]!, /^run: warning: this Copilot session will not appear on the stream/);
  assert.match(lines[0]!, 'aep-steer install copilot');
  assert.match(lines[1]!, "cannot join the adapter's Copilot server lane");
});

test.run();
