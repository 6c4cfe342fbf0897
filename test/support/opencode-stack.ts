// The rig of an opencode end-to-end suite: the loopback mock model, the real password-protected
// `opencode serve` in a fresh workspace, and this project's adapter following it, started before
// the suite's tests and ended after them; or, where the pinned binary is missing, the failing test
// that says so.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import { startMockOpenAi, type MockOpenAi } from './mock-openai.js';
import { opencodeBinary, startOpencodeServe, type OpencodeServe } from './opencode-serve.js';
import { startVendorStack, vendorMissing, workspace, type VendorStack, type Workspace } from './vendor-e2e.js';

export interface OpencodeRig {
  installed: boolean;
  ws: Workspace;
  mock: MockOpenAi;
  server: OpencodeServe;
  stack: VendorStack;
}

export function opencodeRig(label: string): OpencodeRig {
  const missing = 'opencode 1.18.33 is not installed in .vendor-clis (run scripts/install-vendor-cli.sh opencode)';
  const rig = {
    installed: !vendorMissing(opencodeBinary(), label, missing),
    ws: workspace(`aep-${label}-`),
  } as OpencodeRig;
  if (!rig.installed) return rig;
  test.before(async () => {
    rig.mock = await startMockOpenAi();
    rig.server = await startOpencodeServe(rig.ws, rig.mock.baseUrl);
    rig.stack = await startVendorStack(
      'opencode',
      {},
      { serve: rig.server.url, servePasswordFile: rig.server.passwordFile },
    );
    rig.stack.evidence.set('opencode serve output', () => rig.server.output().slice(-4000));
  });
  test.after(async () => {
    await rig.stack?.close();
    await rig.server?.kill();
    await rig.mock?.close();
    rmSync(rig.ws.root, { recursive: true, force: true });
  });
  return rig;
}
