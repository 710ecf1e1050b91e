import { hashPassword } from '../api/auth/passwords';
import { createFrame } from '../testkit/annotations';
import { createUserWithToken } from '../testkit/api';
import {
  dragOnFrame,
  eventually,
  openPage,
  useWebUiForFile,
  withScreenshotOnFailure,
  type TestPage,
} from '../testkit/browser';

/**
 * Issue 12's "done when", walked in one browser as a reviewer would: sign in with a password,
 * work through a session's queue with the keyboard alone, fix a box and a polygon in the editor,
 * bulk-accept a class in the crop grid, and resolve a conflict with a colleague. Each step is
 * checked on the page and in the database.
 */
const ctx = useWebUiForFile();
const PASSWORD = 'a reviewer has a long password';

async function frameWithRedaction(sessionId?: string) {
  const made = await createFrame(ctx.api.deps, { sessionId });
  await ctx.api.deps.db.frame.update({ where: { id: made.frame.id }, data: { redactedUri: made.frame.uri } });
  return made;
}

/** An object as the auto-labeller leaves one for review. */
async function machineObject(
  frameId: string,
  className: string,
  conf: number,
  extra: Record<string, unknown> = {},
) {
  const res = await ctx.api.call('POST', `/api/frames/${frameId}/objects`, {
    token: ctx.token.admin,
    body: { class_name: className, state: 'review', ...extra },
  });
  expect(res.status).toBe(201);
  await ctx.api.deps.db.annoObject.update({ where: { id: res.body.id }, data: { conf, source: 'fused' } });
  return res.body.id as string;
}

const row = (id: string) =>
  ctx.api.deps.db.annoObject.findUniqueOrThrow({ where: { id }, include: { class: true } });
const object = async (id: string) =>
  (await ctx.api.call('GET', `/api/objects/${id}`, { token: ctx.token.admin })).body as {
    bbox: number[];
    mask_polygons: number[][];
  };
const near = (actual: number[], expected: number[]) =>
  expect(actual.map((v, i) => Math.abs(v - expected[i]!) <= 1.5)).toEqual(expected.map(() => true));
const shown = (page: TestPage) => page.locator('canvas.frame-canvas').getAttribute('data-painted');

it('a reviewer’s day: keyboard queue, editor fixes, a bulk accept and a conflict resolved', async () => {
  const { db } = ctx.api.deps;
  const rita = await db.user.create({
    data: {
      email: 'rita.story@example.org',
      name: 'Rita',
      role: 'reviewer',
      passwordHash: await hashPassword(PASSWORD),
    },
  });
  // A drive with three cars to judge (two frames) and a pedestrian drawn as a polygon.
  const f1 = await frameWithRedaction();
  const f2 = await frameWithRedaction(f1.sessionId);
  const cars = [
    await machineObject(f1.frame.id, 'car', 0.5, { bbox: [20, 20, 80, 60] }),
    await machineObject(f1.frame.id, 'car', 0.53, { bbox: [300, 20, 380, 70] }),
    await machineObject(f2.frame.id, 'car', 0.56, { bbox: [100, 100, 200, 160] }),
  ];
  const pedestrian = await machineObject(f2.frame.id, 'pedestrian', 0.6, {
    bbox: [400, 100, 460, 220],
    mask_polygons: [[400, 100, 460, 100, 460, 220, 400, 220]],
  });
  // Another drive with six trucks for the crop grid.
  const trucks: string[] = [];
  const f3 = await frameWithRedaction();
  for (let i = 0; i < 6; i++)
    trucks.push(
      await machineObject(f3.frame.id, 'truck', 0.4 + i * 0.01, {
        bbox: [20 + i * 90, 200, 100 + i * 90, 260],
      }),
    );

  const context = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await openPage(context);
  try {
    await withScreenshotOnFailure(page, 'story', async () => {
      // 1. Sign in with a password; the deep link to the session's keyboard review survives it.
      await page.goto(ctx.at(`/review?session_id=${f1.sessionId}&class_name=car`));
      await page.waitForURL(/\/signin\?next=/);
      await page.getByLabel('E-mail').fill(rita.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(/\/review\?/);

      // 2. The queue with the keyboard alone: accept, reject, then open the third car in the editor.
      await eventually(async () => expect(await shown(page)).toBe(cars[0]));
      await page.keyboard.press('a');
      await eventually(async () => expect(await shown(page)).toBe(cars[1]));
      await page.keyboard.press('r');
      await eventually(async () => expect(await shown(page)).toBe(cars[2]));
      expect((await row(cars[0]!)).state).toBe('accepted');
      await eventually(async () => expect((await row(cars[1]!)).state).toBe('rejected'));
      await page.keyboard.press('e');
      await page.waitForURL(/\/editor\?/);
      await page.locator(`canvas[data-view][data-loaded="${f2.frame.id}"]`).waitFor();
      await eventually(async () => expect(await shown(page)).toBe(cars[2]));

      // 3. The editor: the car's box is too small (its corner is dragged out) and the pedestrian's
      //    polygon misses a foot (a vertex is dragged down).
      await dragOnFrame(page, [200, 160], [230, 180]);
      await eventually(async () => near((await object(cars[2]!)).bbox, [100, 100, 230, 180]));
      await page.keyboard.press('Tab');
      await eventually(async () => expect(await shown(page)).toBe(pedestrian));
      await page.keyboard.press('z'); // zoom to it
      await dragOnFrame(page, [460, 220], [470, 240]);
      await eventually(async () =>
        near((await object(pedestrian)).mask_polygons[0]!, [400, 100, 460, 100, 470, 240, 400, 220]),
      );

      // 4. The crop grid: every truck selected with Ctrl+A and accepted with A, in one request.
      await page.goto(ctx.at(`/grid?class_name=truck&session_id=${f3.sessionId}`));
      const grid = page.getByRole('grid', { name: 'Crops' });
      await grid.waitFor();
      await page.locator(`[data-object-id="${trucks[5]}"]`).waitFor();
      await grid.focus();
      await page.keyboard.press('Control+a');
      await eventually(async () =>
        expect(await page.getByTestId('selection').innerText()).toBe('6 of 6 selected'),
      );
      await page.keyboard.press('a');
      await eventually(async () => {
        const rows = await db.annoObject.findMany({ where: { id: { in: trucks } } });
        expect(rows.map((r) => r.state)).toEqual(Array(6).fill('accepted'));
      });
      expect(await db.reviewBatch.count({ where: { reviewerId: rita.id } })).toBe(1);

      // 5. A colleague relabels the last car while Rita looks at it; she merges: her accept on their class.
      await page.goto(ctx.at(`/review?session_id=${f1.sessionId}&class_name=car&state=review`));
      await eventually(async () => expect(await shown(page)).toBe(cars[2]));
      const colleague = await createUserWithToken(ctx.api.deps, 'reviewer');
      const version = (await row(cars[2]!)).version;
      const relabel = await ctx.api.call('POST', `/api/objects/${cars[2]}/review`, {
        token: colleague.token,
        body: { action: 'edit', class_name: 'van', expected_version: version },
      });
      expect(relabel.status).toBe(200);
      await page.keyboard.press('a');
      const dialog = page.getByRole('dialog', { name: 'Someone else changed this object' });
      await dialog.waitFor();
      await page.keyboard.press('3');
      await dialog.waitFor({ state: 'detached' });
      await eventually(async () =>
        expect(await row(cars[2]!)).toMatchObject({ state: 'accepted', class: { name: 'van' } }),
      );
      expect(page.problems).toEqual([]);
    });
  } finally {
    await context.close();
  }
});
