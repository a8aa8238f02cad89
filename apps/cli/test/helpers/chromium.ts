// Opens report pages in Debian's headless Chromium through playwright-core, watching for console
// errors, page errors, dialogs and every network request. Chromium missing is a failure, not a
// skip: .ci/run installs it, so a missing browser means the environment is broken.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.WF_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface PageWatch {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  dialogs: string[];
  /** Every request other than the report document itself. */
  requests: string[];
}

export interface Browser {
  open(file: string): Promise<PageWatch>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium; .ci/run does this) or set WF_CHROMIUM`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'wf-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 900 },
    offline: false,
  });
  return {
    async open(file) {
      const page = await context.newPage();
      const url = pathToFileURL(file).href;
      const watch: PageWatch = {
        page,
        consoleErrors: [],
        pageErrors: [],
        dialogs: [],
        requests: [],
      };
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') watch.consoleErrors.push(m.text());
      });
      page.on('pageerror', (e) => watch.pageErrors.push(String(e)));
      page.on('dialog', (d) => {
        watch.dialogs.push(d.message());
        void d.dismiss();
      });
      page.on('request', (r) => {
        if (r.url() !== url) watch.requests.push(r.url());
      });
      await page.goto(url, { waitUntil: 'load' });
      return watch;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** `artifacts/` at the repository root (gitignored): screenshots tests leave for people to look at. */
export function artifactPath(name: string): string {
  const path = join(import.meta.dirname, '..', '..', '..', '..', 'artifacts', name);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}
