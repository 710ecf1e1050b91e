/**
 * The window's plot, DBC loading and bit heatmap in a real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core), on the real 60 s RAV4 radar capture and its DBC
 * (../shared/fixtures/can/real/), both loaded through the page.
 *
 * The shape check: the test decodes the signal itself, from the capture's text and the DBC's
 * SG_ line (its own candump parser and Motorola bit walk, sharing no code with canlab), maps the
 * samples through the axes the lane canvas publishes in its data attributes (view time range,
 * y-range, plot rectangle), and compares that polyline column by column with the pixels of a real
 * screenshot of the lane: in each pixel column, the topmost and lowest pixels of the lane's
 * colour must lie within 2.5 px of the topmost and lowest points of the expected polyline there.
 * The screenshot is decoded by the browser. Screenshots of the whole window land in
 * os.tmpdir(): canlab-window-plot.png (the plot panel) and canlab-window-plot-page.png after the run, canlab-window-plot-failure.png when a step fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import type { RestServer } from '../../src/rest/server';
import { Workspace } from '../../src/workspace/workspace';
import { fixture } from '../fixtures';
import { openWindow, type OpenWindow } from './helpers';

const TOKEN = 'plot-test-token-7c1e';
const CAPTURE = fixture('real', 'rav4-2018-radar.log');
const DBC = fixture('real', 'toyota_adas.dbc');
export const SCREENSHOT = path.join(os.tmpdir(), 'canlab-window-plot.png');
export const PAGE_SCREENSHOT = path.join(os.tmpdir(), 'canlab-window-plot-page.png');
const FAILURE_SCREENSHOT = path.join(os.tmpdir(), 'canlab-window-plot-failure.png');

jest.setTimeout(120_000);

// Browser globals used by code that runs in the page, typed as far as it uses them (canlab compiles
// without the DOM library).
declare const Image: new () => { src: string; width: number; height: number; decode(): Promise<void> };
declare const OffscreenCanvas: new (
  width: number,
  height: number,
) => {
  getContext(kind: '2d'): {
    drawImage(image: unknown, x: number, y: number): void;
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
  } | null;
};
declare const DataTransfer: new () => { items: { add(file: File): void } };

interface LogFrame {
  t: number;
  id: number;
  data: number[];
}

/** The candump lines `(t) can1 217#93...`, read without canlab's readers. */
function readLog(file: string): LogFrame[] {
  const out: LogFrame[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\((\d+\.\d+)\) \S+ ([0-9A-F]{3})#([0-9A-F]*)$/.exec(line.trim());
    if (m)
      out.push({ t: Number(m[1]), id: parseInt(m[2]!, 16), data: Buffer.from(m[3]!, 'hex').toJSON().data });
  }
  return out;
}

interface SgLine {
  startBit: number;
  length: number;
  bigEndian: boolean;
  signed: boolean;
  factor: number;
  offset: number;
}

/** The `SG_` line of `signal` in message `id`, read from the DBC text. */
function sgLine(dbc: string, id: number, signal: string): SgLine {
  const block = dbc.split(/\n(?=BO_ )/).find((b) => b.startsWith(`BO_ ${id} `));
  const m = new RegExp(`SG_ ${signal} : (\\d+)\\|(\\d+)@([01])([+-]) \\(([^,]+),([^)]+)\\)`).exec(
    block ?? '',
  );
  if (!m) throw new Error(`no SG_ ${signal} in BO_ ${id}`);
  return {
    startBit: Number(m[1]),
    length: Number(m[2]),
    bigEndian: m[3] === '0',
    signed: m[4] === '-',
    factor: Number(m[5]),
    offset: Number(m[6]),
  };
}

/** A field's raw value by the DBC's own definition: Motorola walks the sawtooth numbering from its MSB. */
function rawValue(data: number[], f: Omit<SgLine, 'factor' | 'offset'>): number {
  const bitAt = (b: number): number => ((data[b >> 3] ?? 0) >> (b & 7)) & 1;
  let raw = 0;
  if (f.bigEndian) {
    for (let k = 0, b = f.startBit; k < f.length; k++, b = b % 8 === 0 ? b + 15 : b - 1)
      raw = raw * 2 + bitAt(b);
  } else {
    for (let k = f.length - 1; k >= 0; k--) raw = raw * 2 + bitAt(f.startBit + k);
  }
  return f.signed && raw >= 2 ** (f.length - 1) ? raw - 2 ** f.length : raw;
}

function expectedSeries(frames: LogFrame[], id: number, sg: SgLine): Array<[number, number]> {
  return frames
    .filter((f) => f.id === id)
    .map((f) => [f.t, rawValue(f.data, sg) * sg.factor + sg.offset] as [number, number]);
}

interface LaneAxes {
  t0: number;
  t1: number;
  y0: number;
  y1: number;
  left: number;
  top: number;
  width: number;
  height: number;
  color: string;
}

async function laneAxes(lane: Locator): Promise<LaneAxes> {
  const d: Record<string, string> = await lane.evaluate((el) => ({ ...el.dataset }));
  const n = (k: string): number => Number(d[k]);
  return {
    t0: n('t0'),
    t1: n('t1'),
    y0: n('y0'),
    y1: n('y1'),
    left: n('left'),
    top: n('top'),
    width: n('width'),
    height: n('height'),
    color: d['color']!,
  };
}

/**
 * Per pixel column of the plot area, the lowest and highest y (CSS pixels, downwards) that the
 * polyline through `samples` reaches inside that column, or undefined where it does not pass.
 */
function expectedColumns(samples: Array<[number, number]>, a: LaneAxes): Array<[number, number] | undefined> {
  const x = (t: number): number => a.left + ((t - a.t0) / (a.t1 - a.t0)) * a.width;
  const y = (v: number): number => a.top + a.height - ((v - a.y0) / (a.y1 - a.y0)) * a.height;
  const cols: Array<[number, number] | undefined> = new Array(Math.floor(a.width));
  for (let i = 1; i < samples.length; i++) {
    const [xa, ya] = [x(samples[i - 1]![0]), y(samples[i - 1]![1])];
    const [xb, yb] = [x(samples[i]![0]), y(samples[i]![1])];
    const yAt = (px: number): number => (xb === xa ? ya : ya + ((yb - ya) * (px - xa)) / (xb - xa));
    for (let c = Math.max(0, Math.floor(xa - a.left)); c < cols.length && c <= xb - a.left; c++) {
      const lo = Math.max(xa, a.left + c);
      const hi = Math.min(xb, a.left + c + 1);
      const ys = xb === xa ? [ya, yb] : [yAt(lo), yAt(hi)];
      const prev = cols[c];
      cols[c] = [Math.min(prev?.[0] ?? Infinity, ...ys), Math.max(prev?.[1] ?? -Infinity, ...ys)];
    }
  }
  return cols;
}

describe('plot, DBC loading and bit heatmap in headless Chromium on the real RAV4 capture', () => {
  let ws: Workspace;
  let win: OpenWindow;
  let server: RestServer;
  let page: Page;
  let consoleErrors: string[];
  const frames = readLog(CAPTURE);
  const dbcText = fs.readFileSync(DBC, 'utf8');

  /**
   * Per pixel column of the lane's plot area, the topmost and lowest rows of pixels in the lane's
   * colour in a screenshot of the lane, decoded by the browser (a second tab would put the window in
   * the background, where Chromium stops drawing frames and every screenshot waits for one).
   */
  async function drawnColumns(lane: Locator, a: LaneAxes): Promise<Array<[number, number] | undefined>> {
    const png = (await lane.screenshot()).toString('base64');
    return page.evaluate(
      async ({ png, a }) => {
        const img = new Image();
        img.src = `data:image/png;base64,${png}`;
        await img.decode();
        const canvas = new OffscreenCanvas(img.width, img.height);
        const ctx = canvas.getContext('2d')!;
        ctx.drawImage(img, 0, 0);
        const px = ctx.getImageData(0, 0, img.width, img.height).data;
        const hex = a.color.replace('#', '');
        const line = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
        // A pixel of the line is the line's colour blended over the plot background by some alpha.
        const bg = [px[4 * ((a.top + 2) * img.width + a.left + 2)]!, 0, 0].map(
          (_, i) => px[4 * ((a.top + 2) * img.width + a.left + 2) + i]!,
        );
        const isLine = (o: number): boolean => {
          const k = [0, 1, 2].reduce((best, i) =>
            Math.abs(line[i]! - bg[i]!) > Math.abs(line[best]! - bg[best]!) ? i : best,
          );
          const alpha = (px[o + k]! - bg[k]!) / (line[k]! - bg[k]!);
          if (alpha < 0.3) return false;
          return [0, 1, 2].every((i) => Math.abs(px[o + i]! - (bg[i]! + alpha * (line[i]! - bg[i]!))) < 30);
        };
        const cols: Array<[number, number] | undefined> = [];
        for (let c = 0; c < Math.floor(a.width); c++) {
          let lo = Infinity;
          let hi = -Infinity;
          // Inside the frame the plot draws around its area.
          for (let y = a.top + 1; y < a.top + a.height - 1; y++)
            if (isLine(4 * (y * img.width + a.left + c))) {
              lo = Math.min(lo, y);
              hi = Math.max(hi, y);
            }
          cols.push(lo <= hi ? [lo, hi + 1] : undefined);
        }
        return cols;
      },
      { png, a },
    );
  }

  /** Share of the plot's pixel columns whose drawn extent matches the independently decoded polyline. */
  async function shapeAgreement(lane: Locator, samples: Array<[number, number]>): Promise<number> {
    const a = await laneAxes(lane);
    const expected = expectedColumns(samples, a);
    const drawn = await drawnColumns(lane, a);
    let checked = 0;
    let agree = 0;
    for (let c = 1; c < expected.length - 1; c++) {
      const e = expected[c];
      const d = drawn[c];
      // The line's width spills a pixel past the first and last sample.
      if (!e && (expected[c - 1] || expected[c + 1])) continue;
      checked++;
      if (!e || !d) agree += Number(!e && !d);
      else agree += Number(Math.abs(d[0] - e[0]) <= 2.5 && Math.abs(d[1] - e[1]) <= 2.5);
    }
    expect(checked).toBeGreaterThan(a.width * 0.9);
    return agree / checked;
  }

  async function settled(lane: Locator): Promise<void> {
    await page.waitForFunction((el) => el?.dataset['pending'] === 'false', await lane.elementHandle());
  }

  beforeAll(async () => {
    ws = new Workspace();
    win = await openWindow(
      ws,
      { token: TOKEN, allowInject: false },
      fs.mkdtempSync(path.join(os.tmpdir(), 'canlab-window-plot-')),
    );
    ({ server, page, consoleErrors } = win);
  });

  afterAll(() => win?.close());

  /** Runs a step, leaving a screenshot of the window behind when it fails. */
  async function step(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (err) {
      await page.screenshot({ path: FAILURE_SCREENSHOT, fullPage: true }).catch(() => undefined);
      throw err;
    }
  }

  it('loads the capture and its DBC through the page; a broken DBC names its line', () =>
    step(async () => {
      await page.goto(`${server.url}/#token=${TOKEN}`);
      await page.getByTestId('status').filter({ hasText: 'empty' }).waitFor();
      await page.locator('#load-path').fill(CAPTURE);
      await page.getByRole('button', { name: 'Load', exact: true }).click();
      await page
        .getByTestId('status')
        .filter({ hasText: `loaded · ${CAPTURE} · ${frames.length} frames` })
        .waitFor();

      await page.getByTestId('dbc-file').setInputFiles(DBC);
      const sgCount = [...dbcText.matchAll(/^ SG_ /gm)].length;
      await page
        .getByTestId('dbc-status')
        .filter({ hasText: `toyota_adas.dbc: ${sgCount} signals from 33 messages` })
        .waitFor();
      expect(ws.signals()).toHaveLength(sgCount);
      expect(new Set(ws.history().undo.map((s) => s.source))).toEqual(new Set(['dbc']));
      await page
        .locator('#signals-body tr')
        .nth(sgCount - 1)
        .waitFor();
      await expect(page.locator('#signals-body tr').first().textContent()).resolves.toContain(
        '0x123 STATUS_MSG',
      );

      // Dropped on the window: a DBC with a bad byte order on its third line.
      const drop = await page.evaluateHandle(() => {
        const dt = new DataTransfer();
        dt.items.add(
          new File(['VERSION ""\nBO_ 12 X: 8 Y\n SG_ A : 0|8@2+ (1,0) [0|0] "" Z\n'], 'broken.dbc'),
        );
        return dt;
      });
      await page.dispatchEvent('main', 'dragover', { dataTransfer: drop });
      await page.locator('#drop-overlay').waitFor();
      await page.dispatchEvent('main', 'drop', { dataTransfer: drop });
      await page
        .locator('#notice', {
          hasText: "broken.dbc:3: malformed SG_ line: byte order must be 0 or 1, found '2'",
        })
        .waitFor();
      expect(await page.locator('#drop-overlay').isHidden()).toBe(true);
      // The refusal is the one failed request the browser reports.
      expect(consoleErrors).toEqual([expect.stringContaining('status of 400 (Bad Request)')]);
      consoleErrors.length = 0;
      expect(ws.signals()).toHaveLength(sgCount);
    }));

  it('plots a DBC signal whose drawn shape matches the series decoded independently, through zoom and pan', () =>
    step(async () => {
      const sg = sgLine(dbcText, 0x217, 'LONG_DIST');
      const samples = expectedSeries(frames, 0x217, sg);
      await page
        .locator('#signals-body tr', { hasText: '0x217 TRACK_A_7' })
        .filter({ hasText: 'LONG_DIST' })
        .getByRole('button', { name: 'Plot' })
        .click();
      const lane = page.locator('.lane[data-key="defined/0x217/LONG_DIST"] canvas');
      await settled(lane);
      // The whole capture on ~1300 columns: 1200 samples, the view the capture's first to last frame.
      const whole = await laneAxes(lane);
      expect(whole.t0).toBe(frames[0]!.t);
      expect(whole.t1).toBe(frames.at(-1)!.t);
      expect(await shapeAgreement(lane, samples)).toBeGreaterThan(0.97);

      // Wheel over 70% of the plot's width: zooms in about the time under the pointer.
      const box = (await lane.boundingBox())!;
      const px = whole.left + whole.width * 0.7;
      const tAt = whole.t0 + 0.7 * (whole.t1 - whole.t0);
      await page.mouse.move(box.x + px, box.y + 50);
      await page.mouse.wheel(0, -700);
      await page.waitForFunction(
        (el) => Number(el!.dataset['t1']) - Number(el!.dataset['t0']) < 20,
        await lane.elementHandle(),
      );
      await settled(lane);
      const zoomed = await laneAxes(lane);
      expect((zoomed.t1 - zoomed.t0) / (whole.t1 - whole.t0)).toBeCloseTo(Math.exp(-1.4), 2);
      // The time under the pointer stays put (to the pixel the mouse landed on).
      const cursorT = Number(await lane.getAttribute('data-cursor-t'));
      expect(Math.abs(cursorT - tAt)).toBeLessThan((whole.t1 - whole.t0) / whole.width);
      const pixelOf = (a: LaneAxes): number => ((cursorT - a.t0) / (a.t1 - a.t0)) * a.width;
      expect(pixelOf(zoomed)).toBeCloseTo(pixelOf(whole), 0);
      // The value readout follows the cursor: the sample at or before the pointer's time.
      const readout = await page.locator('.lane[data-key="defined/0x217/LONG_DIST"] .readout').textContent();
      const before = samples.filter(([t]) => t <= cursorT).at(-1)!;
      expect(readout).toContain(`${Number(before[1].toFixed(4))} m at`);
      await page.mouse.move(box.x + px, box.y + box.height + 200);
      expect(await shapeAgreement(lane, samples)).toBeGreaterThan(0.97);

      // Drag 300 px to the left: the view moves 300 px worth of time later.
      await page.mouse.move(box.x + px, box.y + 50);
      await page.mouse.down();
      await page.mouse.move(box.x + px - 150, box.y + 50, { steps: 5 });
      await page.mouse.move(box.x + px - 300, box.y + 50, { steps: 5 });
      await page.mouse.up();
      await settled(lane);
      const panned = await laneAxes(lane);
      const shift = (300 / zoomed.width) * (zoomed.t1 - zoomed.t0);
      expect(panned.t0 - zoomed.t0).toBeCloseTo(shift, 3);
      expect(panned.t1 - panned.t0).toBeCloseTo(zoomed.t1 - zoomed.t0, 6);
      await page.mouse.move(box.x + px, box.y + box.height + 200);
      expect(await shapeAgreement(lane, samples)).toBeGreaterThan(0.97);

      // A second and third signal stack below, each on its own scale, on the same time axis.
      const speed = sgLine(dbcText, 0x217, 'REL_SPEED');
      await page.locator('#plot-signal').selectOption({ label: '0x217 TRACK_A_7 · REL_SPEED (m/s)' });
      await page.locator('#plot-add').click();
      const speedLane = page.locator('.lane[data-key="defined/0x217/REL_SPEED"] canvas');
      await settled(speedLane);
      const speedAxes = await laneAxes(speedLane);
      expect([speedAxes.t0, speedAxes.t1]).toEqual([panned.t0, panned.t1]);
      expect(speedAxes.y1).toBeLessThan(panned.y0);
      expect(await shapeAgreement(speedLane, expectedSeries(frames, 0x217, speed))).toBeGreaterThan(0.97);
      // A double-click goes back to the whole capture.
      await page.locator('.lane').nth(1).locator('canvas').dblclick();
      await page.waitForFunction(([el, t0]) => Number(el!.dataset['t0']) === t0, [
        await lane.elementHandle(),
        whole.t0,
      ] as const);
      await settled(lane);
      expect(await laneAxes(lane)).toEqual(whole);
    }));

  it("shows each bit's flip rate and marks a counter's bits when its finding is clicked", () =>
    step(async () => {
      await page.locator('#ids-body tr', { hasText: '0x217' }).click();
      await page.locator('#heatmap-caption', { hasText: '0x217 TRACK_A_7 · 1200 frames, 8 bytes' }).waitFor();
      // Flip rates computed here from the log: the 8-bit counter in byte 0 halves bit by bit.
      const mine = frames.filter((f) => f.id === 0x217);
      for (let bit = 0; bit < 64; bit++) {
        const flips = mine
          .slice(1)
          .filter((f, i) => ((f.data[bit >> 3]! ^ mine[i]!.data[bit >> 3]!) >> (bit & 7)) & 1).length;
        const cell = page.locator(`#heatmap td[data-bit="${bit}"]`);
        expect(Number(await cell.getAttribute('data-flip-rate'))).toBeCloseTo(flips / (mine.length - 1), 12);
      }
      expect(Number(await page.locator('#heatmap td[data-bit="0"]').getAttribute('data-flip-rate'))).toBe(1);

      // The detector's counter on 0x217, clicked in the intelligence list, is outlined on its 8 bits:
      // exactly the DBC's COUNTER (7|8@0+, byte 0).
      const counter = page.locator('#intel li', { hasText: '0x217 counter' });
      await counter.click();
      await page.locator('#heatmap-highlight', { hasText: '0x217 counter' }).waitFor();
      const outlined = await page
        .locator('#heatmap td.hl')
        .evaluateAll((tds) => tds.map((td) => Number(td.dataset['bit'])));
      expect(outlined.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      // Counters are shown, not plotted.
      expect(await page.locator('.lane').count()).toBe(2);
      // Every DBC signal of the id underlines its bits, with a legend.
      await expect(page.locator('#heatmap-legend').textContent()).resolves.toBe(
        'COUNTERLAT_DISTLONG_DISTNEW_TRACKREL_SPEEDVALIDCHECKSUM',
      );
    }));

  it('plots a candidate field finding with the value the detector read', () =>
    step(async () => {
      const finding = ws
        .intelligence()
        .find((i) => i.kind === 'finding' && i.detail['id'] === '0x217' && i.detail['kind'] === 'field')!;
      const field = finding.detail['field'] as { startBit: number; length: number; byteOrder: string };
      await page.locator('#intel li', { hasText: finding.title }).click();
      const lane = page.locator('.lane').nth(2).locator('canvas');
      await settled(lane);
      const samples = expectedSeries(frames, 0x217, {
        startBit: field.startBit,
        length: field.length,
        bigEndian: field.byteOrder === 'big_endian',
        signed: finding.detail['signed'] === true,
        factor: 1,
        offset: 0,
      });
      expect(await shapeAgreement(lane, samples)).toBeGreaterThan(0.97);
      await page.locator('#heatmap-highlight', { hasText: finding.title }).waitFor();

      // Marks sit on the same time axis in every lane; the screenshot shows them.
      ws.mark('approach', 'begin', 'test', frames[0]!.t + 10);
      ws.mark('approach', 'end', 'test', frames[0]!.t + 22);
      ws.mark('lane change', 'point', 'test', frames[0]!.t + 35);
      await page.locator('#timeline rect.interval[data-label="approach"]').waitFor();
      // The cursor at 30 s into the capture: every lane reads its value there.
      const axes = await laneAxes(lane);
      const box = (await lane.boundingBox())!;
      await page.mouse.move(
        box.x + axes.left + ((frames[0]!.t + 30 - axes.t0) / (axes.t1 - axes.t0)) * axes.width,
        box.y + 40,
      );
      await expect(page.locator('.lane .readout').allTextContents()).resolves.toEqual([
        expect.stringMatching(/ m at 30\.0\d\d s$/),
        expect.stringMatching(/ m\/s at 30\.0\d\d s$/),
        expect.stringMatching(/^\d+ at 30\.0\d\d s$/),
      ]);
      await page.locator('#plot-panel').screenshot({ path: SCREENSHOT });
      await page.screenshot({ path: PAGE_SCREENSHOT, fullPage: true });
      expect(consoleErrors).toEqual([]);
    }));
});
