// The e2e suite around the real opencode 1.18.33 `opencode serve` (password-protected) against
// the loopback mock Chat Completions API, which this project's adapter follows (`opencode --serve
// URL --serve-password-file F`): one session opened on the server, the slow turn the tests steer
// into, and the audit of the adapter's log. Registers the suite's start and teardown with uvu.
import { rmSync } from 'node:fs';
import { test } from 'uvu';
import type { AuditResult } from '../../src/audit/audit.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { auditClean } from './audit-clean.js';
import { reported } from './e2e-stack.js';
import { startMockOpenAi, type MockOpenAi } from './mock-openai.js';
import { opencodeBinary, startOpencodeServe, type OpencodeServe } from './opencode-serve.js';
import { serveTurns } from './serve-turns.js';
import { startVendorStack, vendorMissing, workspace, type VendorStack } from './vendor-e2e.js';

export const OPENCODE_MISSING =
  'opencode 1.18.33 is not installed in .vendor-clis (run scripts/install-vendor-cli.sh opencode)';

interface OpencodeServeSuite {
  /** False when the pinned CLI is missing: its failure is registered and the suite has nothing to run. */
  readonly installed: boolean;
  readonly ws: ReturnType<typeof workspace>;
  /** Set once the suite started (uvu's `before`). */
  readonly mock: MockOpenAi;
  readonly server: OpencodeServe;
  readonly stack: VendorStack;
  /** The session the suite opened on the server. */
  readonly session: string;
  of(type: string, cause?: string): AepEvent | undefined;
  all(type: string): AepEvent[];
  /** Resolves with the session's `run.finished` number `n` (0-based). */
  finishedAfter(n: number): Promise<AepEvent>;
  /** A prompt from the person's client whose shell call waits for a file; resolves once the tool call is on the stream. */
  slowTurn(tag: string): Promise<{ release: () => void; finished: number }>;
  /** The first turn on a fresh server (it also loads its provider), and the serve lane reaching the session. */
  firstTurn(tag: string): Promise<void>;
  /** `aep-steer audit` of the adapter's log: no violation. */
  auditClean(): Promise<AuditResult>;
}

export function opencodeServeSuite(prefix: string, label: string): OpencodeServeSuite {
  let mock: MockOpenAi | undefined;
  let server: OpencodeServe | undefined;
  let stack: VendorStack | undefined;
  let session = '';
  const ws = workspace(prefix);
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the opencode suite has not started');
    return v;
  };
  const suite: OpencodeServeSuite = {
    installed: !vendorMissing(opencodeBinary(), label, OPENCODE_MISSING),
    ws,
    get mock() {
      return started(mock);
    },
    get server() {
      return started(server);
    },
    get stack() {
      return started(stack);
    },
    get session() {
      return session;
    },
    ...serveTurns({
      root: () => ws.root,
      stack: () => suite.stack,
      session: () => session,
      prompt: (id, text) => suite.server.prompt(id, text),
    }),
    async firstTurn(tag) {
      await suite.stack.waitFor('session.started', () => suite.of('session.started'));
      await suite.server.prompt(session, `[[TURN]] [[TOOLS:0]] ${tag} say done`);
      await suite.finishedAfter(0);
      await suite.stack.waitFor('the lane reaches the session', () =>
        suite
          .all('x.opencode.session.described')
          .find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('serve')),
      );
    },
    auditClean: () => auditClean(suite.stack.logPath),
  };
  if (suite.installed) {
    test.before(
      reported(async () => {
        mock = await startMockOpenAi();
        server = await startOpencodeServe(ws, mock.baseUrl);
        stack = await startVendorStack('opencode', {}, { serve: server.url, servePasswordFile: server.passwordFile });
        const s = server;
        stack.evidence.set('opencode serve output', () => s.output().slice(-4000));
        session = await server.session();
      }),
    );
    test.after(async () => {
      await stack?.close();
      await server?.kill();
      await mock?.close();
      rmSync(ws.root, { recursive: true, force: true });
    });
  } else rmSync(ws.root, { recursive: true, force: true });
  return suite;
}
