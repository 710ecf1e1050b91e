/**
 * The window in a real headless Chromium (Debian's /usr/bin/chromium through playwright-core):
 * open it with a capture loaded, define a signal in the signal builder, undo it, add marks and see
 * them on the timeline and the intelligence list. Leaves a screenshot in os.tmpdir().
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createCaptureWriter } from '../../src/formats';
import type { RestServer } from '../../src/rest/server';
import { Workspace } from '../../src/workspace/workspace';
import { frame, openWindow, type OpenWindow } from './helpers';

const TOKEN = 'window-test-token-4f9a';
export const SCREENSHOT = path.join(os.tmpdir(), 'canlab-window.png');

jest.setTimeout(90_000);

/** 0x100: counter in byte 0, speed (0.5 km/h per bit) in bytes 2-3; 0x2F0: a door flag. */
async function writeCapture(file: string): Promise<void> {
  const writer = createCaptureWriter(file);
  for (let i = 0; i < 400; i++) {
    const speed = Math.round(200 + 100 * Math.sin(i / 40));
    await writer.write(frame(i * 0.02, 0x100, [i & 0x0f, 0, speed & 0xff, speed >> 8, 0, 0, 0, 0]));
    if (i % 5 === 0) await writer.write(frame(i * 0.02 + 0.001, 0x2f0, [i > 200 ? 1 : 0, 0x40]));
  }
  await writer.close();
}

describe('the window in headless Chromium', () => {
  let ws: Workspace;
  let win: OpenWindow;
  let server: RestServer;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canlab-window-'));
    const capture = path.join(dir, 'drive.log');
    await writeCapture(capture);
    ws = new Workspace();
    await ws.loadCapture(capture);
    win = await openWindow(ws, { token: TOKEN, allowInject: true }, dir);
    ({ server, page, consoleErrors } = win);
  });

  afterAll(() => win?.close());

  it('shows the capture, builds and undoes a signal, places marks on the timeline and the intelligence list', async () => {
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.getByTestId('status').filter({ hasText: 'loaded' }).waitFor();
    // The token leaves the address bar once read.
    expect(page.url()).toBe(`${server.url}/`);
    await expect(page.getByTestId('status').textContent()).resolves.toContain('480 frames · 2 ids');
    await page.locator('#frames-body tr').first().waitFor();
    expect(await page.locator('#frames-body tr').count()).toBe(50);
    await expect(page.locator('#ids-body tr').allTextContents()).resolves.toEqual([
      expect.stringContaining('0x100'),
      expect.stringContaining('0x2F0'),
    ]);
    expect(await page.getByTestId('arm-tx').isChecked()).toBe(false);

    // Signal builder: define, see it listed with its decoded value, undo, see it gone.
    const form = page.locator('#signal-form');
    await form.locator('[name=messageId]').fill('0x100');
    await form.locator('[name=name]').fill('VehicleSpeed');
    await form.locator('[name=startBit]').fill('16');
    await form.locator('[name=length]').fill('16');
    await form.locator('[name=factor]').fill('0.5');
    await form.locator('[name=unit]').fill('km/h');
    await form.getByRole('button', { name: 'Define signal' }).click();
    const row = page.locator('#signals-body tr[data-signal="VehicleSpeed"]');
    await row.waitFor();
    const lastSpeed = Math.round(200 + 100 * Math.sin(399 / 40));
    await expect(row.textContent()).resolves.toContain(`${lastSpeed * 0.5} km/h`);
    expect(ws.signals().map((d) => d.signal.name)).toEqual(['VehicleSpeed']);
    expect(ws.history().undo.at(-1)?.source).toBe('window');

    await page.getByTestId('undo').click();
    await row.waitFor({ state: 'detached' });
    expect(ws.signals()).toEqual([]);
    expect(await page.getByTestId('redo').isEnabled()).toBe(true);
    expect(await page.getByTestId('undo').isDisabled()).toBe(true);

    // Marks: an interval by two toggles and a point, drawn on the timeline and listed.
    const markForm = page.locator('#mark-form');
    await markForm.locator('[name=label]').fill('brake');
    await markForm.locator('[name=at]').fill('2');
    await markForm.getByRole('button', { name: 'Mark' }).click();
    await page.locator('#timeline rect.interval.open[data-label="brake"]').waitFor();
    await markForm.locator('[name=at]').fill('4.5');
    await markForm.getByRole('button', { name: 'Mark' }).click();
    await page.locator('#timeline rect.interval:not(.open)[data-label="brake"]').waitFor();
    // A click on the timeline picks the time of the next mark (here about the middle, 4 s).
    const box = (await page.getByTestId('timeline').boundingBox())!;
    await page.getByTestId('timeline').click({ position: { x: box.width / 2, y: 60 } });
    expect(Number(await markForm.locator('[name=at]').inputValue())).toBeCloseTo(3.99, 1);
    await markForm.locator('[name=label]').fill('horn');
    await markForm.locator('[name=action]').selectOption('point');
    await markForm.getByRole('button', { name: 'Mark' }).click();
    // A vertical line has an empty bounding box, so Playwright never calls it visible: wait for it in the DOM.
    await page.locator('#timeline line.point[data-label="horn"]').waitFor({ state: 'attached' });
    await page.getByTestId('intelligence').locator('li', { hasText: 'mark horn: point' }).waitFor();
    const items = await page.locator('#intel li').allTextContents();
    expect(items[0]).toContain('mark horn: point');
    expect(items[1]).toContain('mark brake: interval');
    expect(items.some((t) => t.includes('0x100 counter'))).toBe(true);
    expect(ws.marks().map((m) => [m.label, m.kind, m.start, m.end, m.source])).toEqual([
      ['brake', 'interval', 2, 4.5, 'window'],
      ['horn', 'point', expect.closeTo(3.99, 1), expect.closeTo(3.99, 1), 'window'],
    ]);

    // The ARM TX switch arms and disarms the workspace (no transmitter here, so Send stays disabled).
    await page.getByTestId('arm-tx').check();
    await page.locator('header .arm.on').waitFor();
    expect(ws.armTx()).toBe(true);
    expect(await page.locator('#inject-send').isDisabled()).toBe(true);
    await page.getByTestId('arm-tx').uncheck();
    await page.locator('header .arm:not(.on)').waitFor();
    expect(ws.armTx()).toBe(false);

    // No script error, no CSP violation, no failed request so far.
    expect(consoleErrors).toEqual([]);

    // A refused action shows the server's reason.
    await markForm.locator('[name=label]').fill('brake');
    await markForm.locator('[name=action]').selectOption('end');
    await markForm.locator('[name=at]').fill('');
    await markForm.getByRole('button', { name: 'Mark' }).click();
    await page.locator('#notice', { hasText: "no interval is open for 'brake'" }).waitFor();

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });
});
