import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildWeb } from '../web/build';
import { useApiForFile, type ApiForFile } from './api';
import { REPO_ROOT } from './stack';

/** Debian's Chromium, which `infra/stack.sh up` installs; a machine without it fails, never skips. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where a failing UI test leaves its screenshot. */
export const SCREENSHOTS = path.join(REPO_ROOT, 'test-results', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install it with apt-get install chromium (infra/stack.sh up does)`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

export interface WebUiForFile extends ApiForFile {
  browser: Browser;
  /** An absolute URL of the UI under test. */
  at(pathAndQuery: string): string;
}

/**
 * For the calling test file: the UI built afresh into a temporary folder, the real API serving it
 * on a fresh database (useApiForFile), and Chromium; all closed and removed after the file.
 */
export function useWebUiForFile(env: Record<string, string> = {}): WebUiForFile {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drivelab-web-'));
  beforeAll(() => buildWeb({ outDir: dir }), 60_000);
  const ctx = useApiForFile({ APP_HTTP__WEB_DIR: dir, ...env }) as WebUiForFile;
  ctx.at = (p) => `${ctx.api.url}${p}`;
  beforeAll(async () => {
    ctx.browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await ctx.browser?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return ctx;
}

/** A browser page that keeps what the page logs and throws, for a failing test to show. */
export type TestPage = Page & { problems: string[] };

export async function openPage(context: BrowserContext): Promise<TestPage> {
  const page = (await context.newPage()) as TestPage;
  page.problems = [];
  page.on('pageerror', (err) => page.problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    // A 4xx the app handled is logged by Chromium itself as a failed load; it is no page problem.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
      page.problems.push(`console: ${m.text()}`);
  });
  return page;
}

/**
 * Runs a UI test's steps; when one fails, a full-page screenshot named after the test is written
 * to test-results/screenshots and its path (with the page's own errors) joins the failure. With
 * UI_SCREENSHOTS=1 every test leaves one, for a person to look at what the tests saw.
 */
export async function withScreenshotOnFailure(
  page: Page & { problems?: string[] },
  name: string,
  steps: () => Promise<void>,
): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`);
  try {
    await steps();
    if (process.env.UI_SCREENSHOTS === '1') await page.screenshot({ path: file, fullPage: true });
  } catch (err) {
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    const problems = page.problems?.length ? `\npage problems:\n${page.problems.join('\n')}` : '';
    (err as Error).message += `\nscreenshot: ${file}${problems}`;
    throw err;
  }
}

/**
 * Retries an assertion about the page until it holds or the time is up (the page renders
 * asynchronously); the last failure is the one reported.
 */
export async function eventually(assertion: () => Promise<void> | void, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * A browser context already signed in as `user`, the way the sign-in page leaves the browser (the
 * session in localStorage), for tests about what comes after signing in.
 */
export async function signedInContext(
  browser: Browser,
  user: { token: string; userId: string; email: string; role: 'annotator' | 'reviewer' | 'admin' },
  viewport = { width: 1280, height: 800 },
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  const session = {
    token: user.token,
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    user: { id: user.userId, email: user.email, name: `${user.role} in a test`, role: user.role },
  };
  await context.addInitScript({
    content: `localStorage.setItem('drivelab.session', ${JSON.stringify(JSON.stringify(session))});`,
  });
  return context;
}

/** With UI_SCREENSHOTS=1, a screenshot of a moment worth looking at (a dialog open, a state shown). */
export async function snapshot(page: Page, name: string): Promise<void> {
  if (process.env.UI_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({
    path: path.join(SCREENSHOTS, `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`),
  });
}

/**
 * A frame point (frame pixels) as a page point, through the view the frame editor's canvas says it
 * last painted with (`data-view`: scale, then the frame point at its top left).
 */
export async function framePointOnPage(page: Page, [fx, fy]: [number, number]): Promise<[number, number]> {
  const canvas = page.getByTestId('editor-canvas');
  const box = (await canvas.boundingBox())!;
  const [scale, x, y] = (await canvas.getAttribute('data-view'))!.split(',').map(Number) as [
    number,
    number,
    number,
  ];
  return [box.x + (fx - x) * scale, box.y + (fy - y) * scale];
}

/** Drags with the mouse from one frame point to another in the frame editor, in a few steps. */
export async function dragOnFrame(page: Page, from: [number, number], to: [number, number]): Promise<void> {
  const a = await framePointOnPage(page, from);
  const b = await framePointOnPage(page, to);
  await page.mouse.move(a[0], a[1]);
  await page.mouse.down();
  await page.mouse.move(b[0], b[1], { steps: 6 });
  await page.mouse.up();
}
