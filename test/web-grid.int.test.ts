import type { BrowserContext } from 'playwright-core';
import { createUserWithToken } from '../testkit/api';
import { createFrame } from '../testkit/annotations';
import {
  eventually,
  openPage,
  signedInContext,
  useWebUiForFile,
  withScreenshotOnFailure,
  type TestPage,
} from '../testkit/browser';

/**
 * Per-class crop grids in Debian's Chromium against the real API, PostgreSQL and MinIO: a
 * virtualized grid of server-rendered crops, click / Ctrl+click / Shift+click and keyboard
 * selection, bulk accept, reject and relabel checked in the database, undo of a whole batch, and a
 * bulk action with a conflict applying nothing.
 */
const ctx = useWebUiForFile();

let context: BrowserContext;
let reviewer: Awaited<ReturnType<typeof createUserWithToken>>;

beforeAll(async () => {
  reviewer = await createUserWithToken(ctx.api.deps, 'reviewer');
}, 60_000);
beforeEach(async () => {
  context = await signedInContext(ctx.browser, { ...reviewer, role: 'reviewer' });
});
afterEach(async () => {
  await context?.close();
});

/** `n` cars to review on one frame of a new session, in queue order (confidence falling from 0.5). */
async function makeCars(n: number) {
  const { db } = ctx.api.deps;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  const { frame, sessionId } = await createFrame(ctx.api.deps);
  await db.frame.update({ where: { id: frame.id }, data: { redactedUri: frame.uri } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const o = await db.annoObject.create({
      data: {
        frameId: frame.id,
        bbox: [(i * 7) % 500, (i * 3) % 300, ((i * 7) % 500) + 60, ((i * 3) % 300) + 50],
        classId: car.id,
        conf: 0.5 - i * 0.0005,
        source: 'fused',
        state: 'review',
      },
    });
    ids.push(o.id);
  }
  return { sessionId, ids };
}

const cell = (page: TestPage, id: string) => page.locator(`[data-object-id="${id}"]`);
/** The objects' states, in the order of `ids`. */
async function states(ids: string[]): Promise<string[]> {
  const rows = await ctx.api.deps.db.annoObject.findMany({ where: { id: { in: ids } } });
  const byId = new Map(rows.map((o) => [o.id, o.state]));
  return ids.map((id) => byId.get(id)!);
}
const selectionText = (page: TestPage) => page.getByTestId('selection').innerText();

async function openGrid(page: TestPage, sessionId: string) {
  await page.goto(ctx.at(`/grid?class_name=car&session_id=${sessionId}`));
  await page.getByRole('grid', { name: 'Crops' }).waitFor();
}

it('shows only the rows in view, as crops, and loads the rest while scrolling', async () => {
  const q = await makeCars(300);
  const page = await openPage(context);
  const sheetRequests: Array<{ body: { object_ids: string[] }; status: number }> = [];
  page.on('response', (r) => {
    if (r.url().endsWith('/api/objects/crops'))
      sheetRequests.push({
        body: r.request().postDataJSON() as { object_ids: string[] },
        status: r.status(),
      });
  });
  await withScreenshotOnFailure(page, 'grid virtualized', async () => {
    await openGrid(page, q.sessionId);
    await cell(page, q.ids[0]!).waitFor();
    const drawn = await page.locator('[role=gridcell]').count();
    expect(drawn).toBeGreaterThan(20);
    expect(drawn).toBeLessThan(120);
    // Crops come as sheets of 64 (one request each), cut from the frame by the API.
    await eventually(async () =>
      expect(await cell(page, q.ids[0]!).getByRole('img').getAttribute('data-ready')).toBe('true'),
    );
    expect(sheetRequests.length).toBeGreaterThan(0);
    expect(sheetRequests.length).toBeLessThanOrEqual(Math.ceil(drawn / 64) + 1);
    const firstSheet = sheetRequests[0]!;
    expect(firstSheet.body.object_ids).toEqual(q.ids.slice(0, 64));
    expect(firstSheet.status).toBe(200);
    await page
      .getByRole('grid', { name: 'Crops' })
      .evaluate((g: { scrollTop: number; scrollHeight: number }) => {
        g.scrollTop = g.scrollHeight;
      });
    await cell(page, q.ids[299]!).waitFor();
    expect(await cell(page, q.ids[0]!).count()).toBe(0);
    expect(page.problems).toEqual([]);
  });
});

it('selects with click, Shift+click and Ctrl+click, and bulk-accepts exactly the selection in one batch', async () => {
  const q = await makeCars(40);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'grid bulk accept', async () => {
    await openGrid(page, q.sessionId);
    await cell(page, q.ids[2]!).click();
    await cell(page, q.ids[7]!).click({ modifiers: ['Shift'] });
    await cell(page, q.ids[12]!).click({ modifiers: ['Control'] });
    await cell(page, q.ids[5]!).click({ modifiers: ['Control'] });
    await eventually(async () => expect(await selectionText(page)).toBe('6 of 40 selected'));
    await page.getByRole('button', { name: 'Accept (A)' }).click();
    await eventually(async () =>
      expect(await page.getByRole('status').innerText()).toMatch(/6 objects accepted/),
    );
    const chosen = [2, 3, 4, 6, 7, 12].map((i) => q.ids[i]!);
    expect(await states(chosen)).toEqual(Array(6).fill('accepted'));
    expect(await states(q.ids.filter((id) => !chosen.includes(id)))).toEqual(Array(34).fill('review'));
    const reviews = await ctx.api.deps.db.review.findMany({ where: { objectId: { in: chosen } } });
    expect(new Set(reviews.map((r) => r.batchId)).size).toBe(1);
    expect(reviews[0]!.batchId).not.toBeNull();
  });
});

it('selects with the keyboard, rejects with R, and Ctrl+Z undoes the whole batch', async () => {
  const q = await makeCars(30);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'grid keyboard and undo', async () => {
    await openGrid(page, q.sessionId);
    await cell(page, q.ids[0]!).click();
    await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.press('Shift+ArrowRight');
    await eventually(async () => expect(await selectionText(page)).toBe('3 of 30 selected'));
    // The arrow moves the focus on without changing the selection; Space adds the focused crop.
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Space');
    await eventually(async () => expect(await selectionText(page)).toBe('4 of 30 selected'));
    await page.keyboard.press('r');
    const chosen = q.ids.slice(0, 4);
    await eventually(async () => expect(await states(chosen)).toEqual(Array(4).fill('rejected')));
    expect(await states(q.ids.slice(4))).toEqual(Array(26).fill('review'));
    await page.keyboard.press('Control+z');
    await eventually(async () => expect(await states(chosen)).toEqual(Array(4).fill('review')));
    // Ctrl+A adds every crop in view.
    await page.keyboard.press('Control+a');
    await eventually(async () => expect(await selectionText(page)).toBe('30 of 30 selected'));
    await page.keyboard.press('Escape');
    await eventually(async () => expect(await selectionText(page)).toBe('0 of 30 selected'));
  });
});

it('relabels the selection through the picker', async () => {
  const q = await makeCars(5);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'grid relabel', async () => {
    await openGrid(page, q.sessionId);
    await cell(page, q.ids[0]!).click();
    await cell(page, q.ids[1]!).click({ modifiers: ['Shift'] });
    await page.keyboard.press('c');
    await page.getByRole('dialog', { name: 'Choose a class' }).waitFor();
    await page.keyboard.type('bus');
    await page.keyboard.press('Enter');
    await eventually(async () => {
      const rows = await ctx.api.deps.db.annoObject.findMany({
        where: { id: { in: q.ids.slice(0, 2) } },
        include: { class: true },
      });
      expect(rows.map((r) => [r.class.name, r.state])).toEqual([
        ['bus', 'accepted'],
        ['bus', 'accepted'],
      ]);
    });
  });
});

it('applies nothing when a colleague changed one of the selection, says which, and goes through after reloading', async () => {
  const q = await makeCars(6);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'grid conflict', async () => {
    await openGrid(page, q.sessionId);
    await cell(page, q.ids[0]!).click();
    await cell(page, q.ids[2]!).click({ modifiers: ['Shift'] });
    const colleague = await ctx.api.call('POST', `/api/objects/${q.ids[1]}/review`, {
      token: ctx.token.reviewer,
      body: { action: 'reject' },
    });
    expect(colleague.status).toBe(200);
    await page.keyboard.press('a');
    const conflicts = page.getByRole('list', { name: 'Conflicting objects' });
    await eventually(async () =>
      expect(await conflicts.innerText()).toMatch(
        new RegExp(`${q.ids[1]!.slice(0, 8)} you saw version 1, it is now 2`),
      ),
    );
    expect(await states(q.ids.slice(0, 3))).toEqual(['review', 'rejected', 'review']);
    await page.getByRole('button', { name: 'Reload them' }).click();
    await conflicts.waitFor({ state: 'detached' });
    await page.keyboard.press('a');
    await eventually(async () =>
      expect(await states(q.ids.slice(0, 3))).toEqual(['accepted', 'accepted', 'accepted']),
    );
  });
});
