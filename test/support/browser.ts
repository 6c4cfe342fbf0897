// Headless Debian Chromium (/usr/bin/chromium, or CHROMIUM_PATH) driven by playwright-core, with
// a throwaway profile; screenshots go to .tmp/screenshots/ (git-ignored).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const SHOTS = join(process.cwd(), '.tmp', 'screenshots');

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'aep-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  mkdirSync(SHOTS, { recursive: true });
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
