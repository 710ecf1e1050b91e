/** What the window's tests share: a frame builder and the window opened in Debian's Chromium. */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { CanFrame } from '../../src/frame';
import { createRestServer, type RestServer } from '../../src/rest/server';
import type { WorkspaceApi } from '../../src/workspace/types';
import { requireBinary } from '../binaries';

/** A classic data frame on channel 0; `extra` overrides any field. */
export function frame(t: number, id: number, data: number[], extra: Partial<CanFrame> = {}): CanFrame {
  return {
    timestamp: t,
    id,
    extended: false,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: data.length,
    data: Uint8Array.from(data),
    channel: 0,
    ...extra,
  };
}

export interface OpenWindow {
  server: RestServer;
  context: BrowserContext;
  /** Not navigated yet: the test opens `${server.url}/#token=…`. */
  page: Page;
  /** Script errors, CSP violations and failed requests the page reported, in order. */
  consoleErrors: string[];
  /** Closes the browser and the server and removes `dir`. */
  close(): Promise<void>;
}

/**
 * The REST server over `workspace` on a free loopback port, and headless Chromium with a fresh
 * profile under `dir` (a temporary folder the test made), one 1400×1000 page, its errors collected.
 */
export async function openWindow(
  workspace: WorkspaceApi,
  options: { token: string; allowInject: boolean },
  dir: string,
): Promise<OpenWindow> {
  const server = await createRestServer({ workspace, ...options, port: 0 });
  const context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: requireBinary('/usr/bin/chromium', 'chromium'),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1400, height: 1000 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  return {
    server,
    context,
    page,
    consoleErrors,
    close: async () => {
      await context.close();
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
