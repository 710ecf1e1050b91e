import type { BrowserContext } from 'playwright-core';
import { createFrame } from '../testkit/annotations';
import { createUserWithToken } from '../testkit/api';
import {
  dragOnFrame,
  eventually,
  framePointOnPage,
  openPage,
  signedInContext,
  snapshot,
  useWebUiForFile,
  withScreenshotOnFailure,
  type TestPage,
} from '../testkit/browser';

/**
 * The frame editor in Debian's Chromium against the real API, PostgreSQL and MinIO: each shape
 * drawn and edited with the mouse and the keyboard, checked in the database (and for masks in the
 * object store) afterwards; the panel, layers, checkpoints, image variants, deep links and a
 * conflict between two reviewers.
 */
const ctx = useWebUiForFile();

type User = Awaited<ReturnType<typeof createUserWithToken>>;
let reviewer: User;
let annotator: User;
let context: BrowserContext;

beforeAll(async () => {
  [reviewer, annotator] = await Promise.all([
    createUserWithToken(ctx.api.deps, 'reviewer'),
    createUserWithToken(ctx.api.deps, 'annotator'),
  ]);
}, 60_000);
beforeEach(async () => {
  context = await signedInContext(ctx.browser, { ...reviewer, role: 'reviewer' });
});
afterEach(async () => {
  await context?.close();
});

/** A 640×360 frame whose redacted copy exists (the PII pass has run). */
async function makeFrame(sessionId?: string) {
  const made = await createFrame(ctx.api.deps, { sessionId });
  await ctx.api.deps.db.frame.update({ where: { id: made.frame.id }, data: { redactedUri: made.frame.uri } });
  return made;
}

/** An object made through the API, as a person (or importer) would. */
async function addObject(
  frameId: string,
  body: Record<string, unknown>,
): Promise<{ id: string; version: number }> {
  const res = await ctx.api.call('POST', `/api/frames/${frameId}/objects`, {
    token: ctx.token.reviewer,
    body: { state: 'review', ...body },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; version: number };
}

const readObject = async (id: string) =>
  (await ctx.api.call('GET', `/api/objects/${id}`, { token: ctx.token.reviewer })).body as {
    bbox: number[];
    rbox: number[] | null;
    rot_deg: number;
    class_name: string;
    state: string;
    source: string;
    version: number;
    attrs: Record<string, unknown>;
    mask_polygons: number[][] | null;
    polyline: number[][] | null;
    keypoints: Record<string, number[]> | null;
  };

async function openEditor(page: TestPage, frameId: string, extra = '') {
  await page.goto(ctx.at(`/editor?frame=${frameId}${extra}`));
  await page.locator(`canvas.frame-canvas[data-view][data-loaded="${frameId}"]`).waitFor();
}

async function clickFrame(
  page: TestPage,
  p: [number, number],
  opts: { alt?: boolean; double?: boolean } = {},
) {
  const [x, y] = await framePointOnPage(page, p);
  if (opts.double) return page.mouse.dblclick(x, y);
  if (opts.alt) await page.keyboard.down('Alt');
  await page.mouse.click(x, y);
  if (opts.alt) await page.keyboard.up('Alt');
}

async function pickClass(page: TestPage, typed: string) {
  const picker = page.getByRole('dialog', { name: 'Choose a class' });
  await picker.waitFor();
  await page.keyboard.type(typed);
  await page.keyboard.press('Enter');
  await picker.waitFor({ state: 'detached' });
}

const panel = (page: TestPage) => page.getByTestId('object-panel');
const selectedId = (page: TestPage) => page.getByTestId('editor-canvas').getAttribute('data-painted');
const near = (actual: number[], expected: number[], tol = 1.5) =>
  actual.forEach((v, i) => expect(Math.abs(v - expected[i]!)).toBeLessThanOrEqual(tol));

/** The newest object on a frame (what a create just made). */
const newest = (frameId: string) =>
  ctx.api.deps.db.annoObject.findFirstOrThrow({ where: { frameId }, orderBy: { createdAt: 'desc' } });

describe('creating each shape with the mouse', () => {
  it('B draws a box by dragging; the picker names its class; a reviewer’s box is accepted', async () => {
    const { frame } = await makeFrame();
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor create box', async () => {
      await openEditor(page, frame.id);
      await page.keyboard.press('b');
      await dragOnFrame(page, [100, 80], [220, 160]);
      await pickClass(page, 'truck');
      await page.getByRole('status').filter({ hasText: 'Created a box of class truck' }).waitFor();
      const o = await newest(frame.id);
      near(o.bbox, [100, 80, 220, 160]);
      expect(o).toMatchObject({ state: 'accepted', source: 'human', rotDeg: 0 });
      expect(await panel(page).getByTestId('class').innerText()).toMatch(/^truck/);
      expect(page.problems).toEqual([]);
    });
  });

  it('P draws a polygon point by point and Enter closes it; the mask lands in the object store', async () => {
    const { frame } = await makeFrame();
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor create polygon', async () => {
      await openEditor(page, frame.id);
      await page.keyboard.press('p');
      for (const p of [
        [300, 100],
        [400, 110],
        [380, 220],
        [310, 200],
      ] as Array<[number, number]>)
        await clickFrame(page, p);
      await page.keyboard.press('Enter');
      await pickClass(page, 'pedestrian');
      await page.getByRole('status').filter({ hasText: 'Created a polygon of class pedestrian' }).waitFor();
      const o = await readObject((await newest(frame.id)).id);
      expect(o.mask_polygons).toHaveLength(1);
      near(o.mask_polygons![0]!, [300, 100, 400, 110, 380, 220, 310, 200]);
      near(o.bbox, [300, 100, 400, 220]);
    });
  });

  it('L draws a polyline and K places keypoints; Delete drops the last point while drawing', async () => {
    const { frame } = await makeFrame();
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor create line and keypoints', async () => {
      await openEditor(page, frame.id);
      await page.keyboard.press('l');
      for (const p of [
        [50, 300],
        [150, 280],
        [250, 300],
        [600, 10],
      ] as Array<[number, number]>)
        await clickFrame(page, p);
      await page.keyboard.press('Delete'); // the stray last click
      await page.keyboard.press('Enter');
      await pickClass(page, 'lane marking');
      await page
        .getByRole('status')
        .filter({ hasText: /Created a polyline/ })
        .waitFor();
      const line = await readObject((await newest(frame.id)).id);
      near(line.polyline![0]!, [50, 300, 150, 280, 250, 300]);

      await page.keyboard.press('k');
      await clickFrame(page, [500, 60]);
      await clickFrame(page, [520, 90]);
      await page.keyboard.press('Enter');
      await pickClass(page, 'pedestrian');
      await page
        .getByRole('status')
        .filter({ hasText: /Created a keypoints/ })
        .waitFor();
      const kp = await readObject((await newest(frame.id)).id);
      expect(Object.keys(kp.keypoints!)).toEqual(['p1', 'p2']);
      near(kp.keypoints!.p1!, [500, 60, 2]);
      near(kp.keypoints!.p2!, [520, 90, 2]);
    });
  });
});

describe('editing each shape', () => {
  it('a box: its corner resizes it, ] turns it, arrows nudge it; each is one versioned write', async () => {
    const { frame } = await makeFrame();
    const box = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor edit box', async () => {
      await openEditor(page, frame.id, `&object=${box.id}`);
      await eventually(async () => expect(await selectedId(page)).toBe(box.id));
      await dragOnFrame(page, [200, 160], [240, 200]);
      await eventually(async () => near((await readObject(box.id)).bbox, [100, 100, 240, 200]));
      await page.keyboard.press(']');
      await eventually(async () => expect((await readObject(box.id)).rot_deg).toBe(5));
      await page.keyboard.press('Shift+ArrowRight');
      await eventually(async () => {
        const o = await readObject(box.id);
        near(o.rbox!, [110, 100, 250, 200]);
        expect(o).toMatchObject({ rot_deg: 5, version: 4, source: 'human', state: 'review' });
      });
      expect(await panel(page).getByTestId('shape').innerText()).toBe('box · 5°');
      await snapshot(page, 'editor rotated box');
    });
  });

  it('a polygon: drag a vertex, double-click an edge to add one, Alt+click to remove one', async () => {
    const { frame } = await makeFrame();
    const poly = await addObject(frame.id, {
      class_name: 'pedestrian',
      bbox: [300, 100, 400, 200],
      mask_polygons: [[300, 100, 400, 100, 400, 200, 300, 200]],
    });
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor edit polygon', async () => {
      await openEditor(page, frame.id, `&object=${poly.id}`);
      await eventually(async () => expect(await selectedId(page)).toBe(poly.id));
      await dragOnFrame(page, [400, 200], [420, 230]);
      await eventually(async () =>
        near((await readObject(poly.id)).mask_polygons![0]!, [300, 100, 400, 100, 420, 230, 300, 200]),
      );
      await clickFrame(page, [350, 100], { double: true });
      await eventually(async () => expect((await readObject(poly.id)).mask_polygons![0]).toHaveLength(10));
      near((await readObject(poly.id)).mask_polygons![0]!.slice(2, 4), [350, 100]);
      await clickFrame(page, [300, 200], { alt: true });
      await eventually(async () =>
        near((await readObject(poly.id)).mask_polygons![0]!, [300, 100, 350, 100, 400, 100, 420, 230]),
      );
      const o = await readObject(poly.id);
      near(o.bbox, [300, 100, 420, 230]);
      expect(o.version).toBe(4);
      expect(page.problems).toEqual([]);
    });
  });

  it('a polyline vertex and a keypoint move with the mouse; Tab goes from one object to the next', async () => {
    const { frame } = await makeFrame();
    const line = await addObject(frame.id, {
      class_name: 'lane_marking',
      bbox: [50, 250, 250, 300],
      polyline: [[50, 300, 150, 250, 250, 300]],
    });
    const kp = await addObject(frame.id, {
      class_name: 'pedestrian',
      bbox: [496, 56, 524, 94],
      keypoints: { head: [500, 60, 2], foot: [520, 90, 2] },
    });
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor edit line and keypoint', async () => {
      await openEditor(page, frame.id);
      await page.keyboard.press('Tab');
      await eventually(async () => expect(await selectedId(page)).toBe(line.id));
      await dragOnFrame(page, [150, 250], [150, 200]);
      await eventually(async () =>
        near((await readObject(line.id)).polyline![0]!, [50, 300, 150, 200, 250, 300]),
      );
      await page.keyboard.press('Tab');
      await eventually(async () => expect(await selectedId(page)).toBe(kp.id));
      await dragOnFrame(page, [520, 90], [560, 120]);
      await eventually(async () => {
        const o = await readObject(kp.id);
        near(o.keypoints!.foot!, [560, 120, 2]);
        near(o.keypoints!.head!, [500, 60, 2]);
      });
    });
  });

  it('C relabels through the picker and the attributes form edits and adds attributes', async () => {
    const { frame } = await makeFrame();
    const o = await addObject(frame.id, {
      class_name: 'car',
      bbox: [100, 100, 200, 160],
      attrs: { occluded: false },
    });
    const page = await openPage(context);
    await withScreenshotOnFailure(page, 'editor relabel and attributes', async () => {
      await openEditor(page, frame.id, `&object=${o.id}`);
      await panel(page).waitFor();
      await page.keyboard.press('c');
      await pickClass(page, 'bus');
      await eventually(async () => expect((await readObject(o.id)).class_name).toBe('bus'));
      await eventually(async () =>
        expect(await panel(page).getByTestId('class').innerText()).toMatch(/^bus/),
      );
      const form = page.getByRole('form', { name: 'Attributes' });
      await form.getByLabel('Value of occluded').fill('true');
      await form.getByRole('button', { name: 'Add attribute' }).click();
      await form.getByLabel('Attribute name').last().fill('truncated');
      await form.getByLabel('Value of truncated').fill('0.25');
      await form.getByRole('button', { name: 'Save attributes' }).click();
      await eventually(async () =>
        expect((await readObject(o.id)).attrs).toEqual({ occluded: true, truncated: 0.25 }),
      );
      // The history timeline shows both writes.
      await eventually(async () =>
        expect(await panel(page).getByTestId('history').innerText()).toMatch(/edit[\s\S]*edit/),
      );
    });
  });
});

it('the panel shows where an object came from: paths, raw confidences, agreement and the critic', async () => {
  const { frame } = await makeFrame();
  const { db } = ctx.api.deps;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  const o = await db.annoObject.create({
    data: {
      frameId: frame.id,
      bbox: [100, 100, 200, 160],
      classId: car.id,
      conf: 0.62,
      source: 'fused',
      state: 'review',
    },
  });
  await db.provenance.create({
    data: {
      objectId: o.id,
      paths: ['closed_set', 'open_vocab'],
      rawConfidences: { closed_set: 0.66, open_vocab: 0.58 },
      agreement: 1,
      entropy: 0.2,
      qualityFlags: [],
      reasonerTrace: {
        route: { state: 'review', reason: 'conf 0.620 in [0.35, 0.8)', demoted_by_critic: false },
        critic: { vetoes: [{ check: 'geometric', detail: { ratio: 9 } }], ran: ['geometric'], skipped: [] },
      },
    },
  });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor provenance', async () => {
    await openEditor(page, frame.id, `&object=${o.id}`);
    const facts = panel(page).getByTestId('provenance');
    await eventually(async () => {
      const text = await facts.innerText();
      expect(text).toContain('closed_set, open_vocab');
      expect(text).toContain('closed_set 0.66, open_vocab 0.58');
      expect(text).toMatch(/1\.00 \(entropy 0\.20\)/);
      expect(text).toContain('geometric {"ratio":9}');
      expect(text).toContain('review: conf 0.620 in [0.35, 0.8)');
    });
    await snapshot(page, 'editor provenance panel');
  });
});

it('hides a class from the canvas and from Tab; the Layers panel shows it again', async () => {
  const { frame } = await makeFrame();
  const car = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const bus = await addObject(frame.id, { class_name: 'bus', bbox: [300, 100, 400, 160] });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor layers', async () => {
    await openEditor(page, frame.id, `&object=${car.id}`);
    await eventually(async () => expect(await selectedId(page)).toBe(car.id));
    await page.keyboard.press('h'); // hides car, the selected object's class
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      await eventually(async () => expect(await selectedId(page)).toBe(bus.id));
    }
    // A click where the hidden car is drawn selects nothing.
    await clickFrame(page, [150, 130]);
    await eventually(async () => expect(await selectedId(page)).toBe(''));
    await page.getByRole('group', { name: 'Classes shown' }).getByLabel('car').check();
    await clickFrame(page, [150, 130]);
    await eventually(async () => expect(await selectedId(page)).toBe(car.id));
  });
});

it('saves a checkpoint, and restoring it brings the frame back', async () => {
  const { frame } = await makeFrame();
  const box = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor checkpoints', async () => {
    await openEditor(page, frame.id, `&object=${box.id}`);
    const form = page.getByRole('form', { name: 'Save a checkpoint' });
    await form.getByLabel('Checkpoint name').fill('before the fix');
    await form.getByLabel('Checkpoint note').fill('as auto-labelled');
    await form.getByRole('button', { name: 'Save' }).click();
    const list = page.getByRole('list', { name: 'Saved checkpoints' });
    await list.getByText('before the fix').waitFor();
    await page.getByTestId('editor-canvas').focus();
    await page.keyboard.press('Shift+ArrowDown');
    await eventually(async () => near((await readObject(box.id)).bbox, [100, 110, 200, 170]));
    await list.getByRole('button', { name: 'Restore before the fix' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored “before the fix”' }).waitFor();
    near((await readObject(box.id)).bbox, [100, 100, 200, 160]);
    await list.getByText('before restore of before the fix').waitFor();
  });
});

it('a reviewer switches to the original image; an annotator never sees the switch, delete or verdict keys', async () => {
  const { frame } = await makeFrame();
  const o = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160], state: 'accepted' });
  const page = await openPage(context);
  const images: string[] = [];
  page.on('request', (r) => r.url().includes(`/frames/${frame.id}/image`) && images.push(r.url()));
  await withScreenshotOnFailure(page, 'editor original image', async () => {
    await openEditor(page, frame.id);
    await page.keyboard.press('o');
    await eventually(() =>
      expect(images.some((u) => new URL(u).searchParams.get('variant') === 'original')).toBe(true),
    );
    await page.getByRole('button', { name: 'Showing the original' }).waitFor();
  });

  const theirs = await signedInContext(ctx.browser, { ...annotator, role: 'annotator' });
  const other = await openPage(theirs);
  try {
    await withScreenshotOnFailure(other, 'editor annotator', async () => {
      await openEditor(other, frame.id, `&object=${o.id}`);
      await panel(other).waitFor();
      expect(await other.getByRole('button', { name: /Showing the/ }).count()).toBe(0);
      await other.keyboard.press('?');
      const help = await other.getByRole('dialog', { name: 'Keyboard shortcuts' }).innerText();
      expect(help).not.toContain('accept the selected object');
      await other.keyboard.press('Escape');
      await other.keyboard.press('a');
      await other.keyboard.press('Delete');
      await other.getByRole('alert').filter({ hasText: 'Deleting an object needs a reviewer' }).waitFor();
      // An annotator's geometry fix is handed in for review, never left accepted.
      await other.keyboard.press('ArrowLeft');
      await eventually(async () =>
        expect(await readObject(o.id)).toMatchObject({ state: 'submitted', version: 2 }),
      );
    });
  } finally {
    await theirs.close();
  }
});

it('Delete asks first, and Enter deletes the object', async () => {
  const { frame } = await makeFrame();
  const o = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor delete', async () => {
    await openEditor(page, frame.id, `&object=${o.id}`);
    await panel(page).waitFor();
    await page.keyboard.press('Delete');
    const ask = page.getByRole('alertdialog', { name: 'Delete this object?' });
    await ask.waitFor();
    await page.keyboard.press('Escape');
    await ask.waitFor({ state: 'detached' });
    expect(await ctx.api.deps.db.annoObject.count({ where: { id: o.id } })).toBe(1);
    await page.keyboard.press('Delete');
    await ask.waitFor();
    await page.keyboard.press('Enter');
    await eventually(async () =>
      expect(await ctx.api.deps.db.annoObject.count({ where: { id: o.id } })).toBe(0),
    );
  });
});

it('a deep link opens the same frame, object and zoom, and the URL follows the view', async () => {
  const { frame } = await makeFrame();
  const o = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor deep link', async () => {
    await openEditor(page, frame.id, `&object=${o.id}&view=2.0000,50.0,40.0`);
    await eventually(async () =>
      expect(await page.getByTestId('editor-canvas').getAttribute('data-view')).toBe('2.0000,50.0,40.0'),
    );
    expect(await selectedId(page)).toBe(o.id);
    await page.keyboard.press('0');
    await eventually(() => expect(new URL(page.url()).searchParams.get('view')).not.toBe('2.0000,50.0,40.0'));
    const link = page.url();
    const again = await openPage(context);
    await again.goto(link);
    await eventually(async () =>
      expect(await again.getByTestId('editor-canvas').getAttribute('data-view')).toBe(
        new URL(link).searchParams.get('view'),
      ),
    );
  });
});

it('F and D walk the session’s frames through the filmstrip', async () => {
  const first = await makeFrame();
  const second = await makeFrame(first.sessionId);
  await addObject(second.frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor filmstrip', async () => {
    await openEditor(page, first.frame.id);
    const strip = page.getByRole('navigation', { name: 'Frames of the session' });
    await strip.getByRole('button', { name: 'Frame 1: 1 objects, 1 to review' }).waitFor();
    await page.keyboard.press('f');
    await eventually(() => expect(new URL(page.url()).searchParams.get('frame')).toBe(second.frame.id));
    await page.getByText('Frame #1 · 1 objects').waitFor();
    await page.keyboard.press('d');
    await eventually(() => expect(new URL(page.url()).searchParams.get('frame')).toBe(first.frame.id));
  });
});

it('two reviewers move one box: the second sees both versions, and 1 keeps their own', async () => {
  const { frame } = await makeFrame();
  const o = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const colleague = await createUserWithToken(ctx.api.deps, 'reviewer');
  const theirs = await signedInContext(ctx.browser, { ...colleague, role: 'reviewer' });
  const page = await openPage(context);
  const other = await openPage(theirs);
  try {
    await withScreenshotOnFailure(page, 'editor conflict', async () => {
      await openEditor(page, frame.id, `&object=${o.id}`);
      await openEditor(other, frame.id, `&object=${o.id}`);
      await eventually(async () => expect(await selectedId(page)).toBe(o.id));
      await eventually(async () => expect(await selectedId(other)).toBe(o.id));
      await other.keyboard.press('Shift+ArrowDown');
      await eventually(async () => near((await readObject(o.id)).bbox, [100, 110, 200, 170]));

      await page.keyboard.press('Shift+ArrowRight');
      const dialog = page.getByRole('dialog', { name: 'Someone else changed this object' });
      await dialog.waitFor();
      expect(await dialog.getByRole('region', { name: 'Yours' }).innerText()).toMatch(/110, 100, 210, 160/);
      expect(await dialog.getByRole('region', { name: 'Theirs (now)' }).innerText()).toMatch(
        /100, 110, 200, 170/,
      );
      near((await readObject(o.id)).bbox, [100, 110, 200, 170]); // nothing overwritten yet
      await snapshot(page, 'editor conflict dialog');
      await page.keyboard.press('1');
      await dialog.waitFor({ state: 'detached' });
      await eventually(async () => {
        const now = await readObject(o.id);
        near(now.bbox, [110, 100, 210, 160]);
        expect(now.version).toBe(3);
      });
    });
  } finally {
    await theirs.close();
  }
});

it('keeps edits made while the connection is lost, and sends them in order when it returns', async () => {
  const { frame } = await makeFrame();
  const o = await addObject(frame.id, { class_name: 'car', bbox: [100, 100, 200, 160] });
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'editor offline', async () => {
    await openEditor(page, frame.id, `&object=${o.id}`);
    await panel(page).waitFor();
    await context.setOffline(true);
    await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.press(']');
    await page
      .getByRole('status')
      .filter({ hasText: /Offline: 1 change waits/ })
      .waitFor();
    await snapshot(page, 'editor offline banner');
    expect((await readObject(o.id)).version).toBe(1);
    await context.setOffline(false);
    await eventually(async () => {
      const now = await readObject(o.id);
      near(now.rbox!, [110, 100, 210, 160]);
      expect(now).toMatchObject({ rot_deg: 5, version: 3 });
    });
    await page
      .getByRole('status')
      .filter({ hasText: /Offline/ })
      .waitFor({ state: 'detached' });
  });
});
