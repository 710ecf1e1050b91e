import type { BrowserContext } from 'playwright-core';
import { createUserWithToken } from '../testkit/api';
import { createFrame } from '../testkit/annotations';
import {
  eventually,
  openPage,
  signedInContext,
  snapshot,
  useWebUiForFile,
  withScreenshotOnFailure,
  type TestPage,
} from '../testkit/browser';

/**
 * Keyboard rapid review in Debian's Chromium against the real API, PostgreSQL and MinIO: every key
 * binding, checked on the page (what is painted, what the panel says) and in the database.
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

/**
 * A session of `frames` frames with `perFrame` cars to review each; returns the object ids in
 * queue order (confidence from 0.5 down, so uncertainty falls one object after the other).
 */
async function makeQueue(frames = 3, perFrame = 2) {
  const { db } = ctx.api.deps;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  let sessionId: string | undefined;
  const ids: string[] = [];
  const frameIds: string[] = [];
  for (let f = 0; f < frames; f++) {
    const made = await createFrame(ctx.api.deps, { sessionId });
    sessionId = made.sessionId;
    frameIds.push(made.frame.id);
    // The PII pass has run: the redacted copy is what every role sees.
    await db.frame.update({ where: { id: made.frame.id }, data: { redactedUri: made.frame.uri } });
    for (let k = 0; k < perFrame; k++) {
      const n = f * perFrame + k;
      const o = await db.annoObject.create({
        data: {
          frameId: made.frame.id,
          bbox: [100 + k * 120, 100, 200 + k * 120, 200],
          classId: car.id,
          conf: 0.5 - n * 0.02,
          source: 'fused',
          state: 'review',
        },
      });
      ids.push(o.id);
    }
  }
  return { sessionId: sessionId!, ids, frameIds };
}

const at = (p: string) => ctx.at(p);
const painted = (page: TestPage) => page.locator('canvas.frame-canvas').getAttribute('data-painted');
const objectRow = (id: string) =>
  ctx.api.deps.db.annoObject.findUniqueOrThrow({ where: { id }, include: { class: true } });

async function openReview(page: TestPage, sessionId: string, object?: string) {
  await page.goto(at(`/review?session_id=${sessionId}${object ? `&object=${object}` : ''}`));
  await page.locator('canvas.frame-canvas').waitFor();
}

async function expectShown(page: TestPage, id: string, position: string) {
  await eventually(async () => expect(await painted(page)).toBe(id));
  expect(await page.getByTestId('progress').innerText()).toBe(position);
}

it('A accepts the object, paints the next one at once, and the database says accepted by a person', async () => {
  const q = await makeQueue();
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review accept', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 6');
    await page.keyboard.press('a');
    await expectShown(page, q.ids[1]!, '2 / 6');
    await eventually(async () =>
      expect(await objectRow(q.ids[0]!)).toMatchObject({ state: 'accepted', source: 'human', version: 2 }),
    );
    await page.keyboard.press('Enter');
    await expectShown(page, q.ids[2]!, '3 / 6');
    expect((await objectRow(q.ids[1]!)).state).toBe('accepted');
    expect(page.problems).toEqual([]);
  });
});

it('R and Delete reject', async () => {
  const q = await makeQueue(1, 2);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review reject', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 2');
    await page.keyboard.press('r');
    await expectShown(page, q.ids[1]!, '2 / 2');
    await page.keyboard.press('Delete');
    await eventually(async () => expect((await objectRow(q.ids[1]!)).state).toBe('rejected'));
    expect((await objectRow(q.ids[0]!)).state).toBe('rejected');
  });
});

it('C opens the class picker: type to search, arrows, Enter relabels; Esc leaves without a change', async () => {
  const q = await makeQueue(1, 2);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review relabel', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 2');
    await page.keyboard.press('c');
    const picker = page.getByRole('dialog', { name: 'Choose a class' });
    await picker.waitFor();
    await page.keyboard.type('motorc');
    await eventually(async () =>
      expect(await picker.getByRole('option').first().innerText()).toMatch(/^motorcycle\s+object · /),
    );
    await page.keyboard.press('Enter');
    await expectShown(page, q.ids[1]!, '2 / 2');
    await eventually(async () =>
      expect(await objectRow(q.ids[0]!)).toMatchObject({ state: 'accepted', class: { name: 'motorcycle' } }),
    );
    await page.keyboard.press('c');
    await picker.waitFor();
    await page.keyboard.type('bus');
    await page.keyboard.press('Escape');
    await picker.waitFor({ state: 'detached' });
    expect((await objectRow(q.ids[1]!)).class.name).toBe('car');
  });
});

it('Tab, Shift+Tab and the arrows move between objects; F and D between frames; nothing is written', async () => {
  const q = await makeQueue(3, 2);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review navigation', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 6');
    await page.keyboard.press('Tab');
    await expectShown(page, q.ids[1]!, '2 / 6');
    await page.keyboard.press('ArrowRight');
    await expectShown(page, q.ids[2]!, '3 / 6');
    await page.keyboard.press('Shift+Tab');
    await expectShown(page, q.ids[1]!, '2 / 6');
    await page.keyboard.press('ArrowLeft');
    await expectShown(page, q.ids[0]!, '1 / 6');
    await page.keyboard.press('f');
    await expectShown(page, q.ids[2]!, '3 / 6');
    await page.keyboard.press('f');
    await expectShown(page, q.ids[4]!, '5 / 6');
    await page.keyboard.press('d');
    await expectShown(page, q.ids[3]!, '4 / 6');
    // The URL names the object in view (written by the render's effect, just after the paint).
    await eventually(async () => expect(new URL(page.url()).searchParams.get('object')).toBe(q.ids[3]));
    const rows = await ctx.api.deps.db.annoObject.findMany({ where: { id: { in: q.ids } } });
    expect(rows.every((r) => r.state === 'review' && r.version === 1)).toBe(true);
  });
});

it('Ctrl+Z undoes the last decision and Ctrl+Shift+Z redoes it', async () => {
  const q = await makeQueue(1, 3);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review undo', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 3');
    await page.keyboard.press('r');
    await expectShown(page, q.ids[1]!, '2 / 3');
    await eventually(async () => expect((await objectRow(q.ids[0]!)).state).toBe('rejected'));
    await page.keyboard.press('Control+z');
    await expectShown(page, q.ids[0]!, '1 / 3');
    await eventually(async () =>
      expect(await objectRow(q.ids[0]!)).toMatchObject({ state: 'review', version: 3 }),
    );
    expect(await page.getByTestId('state').innerText()).toBe('review');
    await page.keyboard.press('Control+Shift+z');
    await expectShown(page, q.ids[1]!, '2 / 3');
    await eventually(async () =>
      expect(await objectRow(q.ids[0]!)).toMatchObject({ state: 'rejected', version: 4 }),
    );
  });
});

it('? lists every binding, and Esc closes the list', async () => {
  const q = await makeQueue(1, 1);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review help', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 1');
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    const text = await help.innerText();
    for (const key of ['A', 'R', 'C', 'Tab', 'Shift+Tab', 'F', 'D', 'Ctrl+Z', 'Ctrl+Shift+Z', '?'])
      expect(text).toContain(key);
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
  });
});

describe('two reviewers on one object', () => {
  let colleague: Awaited<ReturnType<typeof createUserWithToken>>;
  beforeAll(async () => {
    colleague = await createUserWithToken(ctx.api.deps, 'reviewer');
  });

  /** The colleague relabels the first object as a bus in their own browser while we look at it too. */
  async function collide(testName: string, key: '1' | '2' | '3') {
    const q = await makeQueue(1, 2);
    const theirs = await signedInContext(ctx.browser, { ...colleague, role: 'reviewer' });
    const page = await openPage(context);
    const other = await openPage(theirs);
    try {
      await withScreenshotOnFailure(page, testName, async () => {
        await openReview(page, q.sessionId);
        await expectShown(page, q.ids[0]!, '1 / 2');
        await openReview(other, q.sessionId);
        await expectShown(other, q.ids[0]!, '1 / 2');
        await other.keyboard.press('c');
        await other.keyboard.type('bus');
        await other.keyboard.press('Enter');
        await expectShown(other, q.ids[1]!, '2 / 2');
        await eventually(async () => expect((await objectRow(q.ids[0]!)).class.name).toBe('bus'));

        await page.keyboard.press('r');
        const dialog = page.getByRole('dialog', { name: 'Someone else changed this object' });
        await dialog.waitFor();
        expect(await dialog.getByRole('region', { name: 'Yours' }).innerText()).toMatch(
          /reject[\s\S]*rejected[\s\S]*car/,
        );
        expect(await dialog.getByRole('region', { name: 'Theirs' }).innerText()).toMatch(
          /human[\s\S]*accepted[\s\S]*bus[\s\S]*2/,
        );
        await snapshot(page, `${testName} dialog`);
        // Nothing was overwritten before the choice.
        expect(await objectRow(q.ids[0]!)).toMatchObject({ state: 'accepted', version: 2 });
        await page.keyboard.press(key);
        await dialog.waitFor({ state: 'detached' });
        await expectShown(page, q.ids[1]!, '2 / 2');
      });
    } finally {
      await theirs.close();
    }
    return objectRow(q.ids[0]!);
  }

  it('1 keeps mine: my decision and the class I saw', async () => {
    expect(await collide('conflict keep mine', '1')).toMatchObject({
      state: 'rejected',
      class: { name: 'car' },
      version: 3,
    });
  });

  it('2 takes theirs and writes nothing', async () => {
    expect(await collide('conflict take theirs', '2')).toMatchObject({
      state: 'accepted',
      class: { name: 'bus' },
      version: 2,
    });
  });

  it('3 merges: my decision on their version', async () => {
    expect(await collide('conflict merge', '3')).toMatchObject({
      state: 'rejected',
      class: { name: 'bus' },
      version: 3,
    });
  });
});

it('keeps decisions made while the connection is lost, and sends them in order when it returns', async () => {
  const q = await makeQueue(1, 3);
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'review offline', async () => {
    await openReview(page, q.sessionId);
    await expectShown(page, q.ids[0]!, '1 / 3');
    await context.setOffline(true);
    await page.keyboard.press('a');
    await expectShown(page, q.ids[1]!, '2 / 3');
    await page.keyboard.press('r');
    await expectShown(page, q.ids[2]!, '3 / 3');
    await eventually(async () =>
      expect(await page.getByRole('status').innerText()).toMatch(/2 decisions wait to be sent/),
    );
    await snapshot(page, 'review offline banner');
    expect((await objectRow(q.ids[0]!)).state).toBe('review');
    await context.setOffline(false);
    await eventually(async () => {
      expect((await objectRow(q.ids[0]!)).state).toBe('accepted');
      expect((await objectRow(q.ids[1]!)).state).toBe('rejected');
    });
    await page.getByRole('status').waitFor({ state: 'detached' });
    // Each was sent once: one review apiece.
    expect(await ctx.api.deps.db.review.count({ where: { objectId: { in: q.ids.slice(0, 2) } } })).toBe(2);
  });
});

it('a deep link opens the object it names, and the frame image comes through a media token', async () => {
  const q = await makeQueue(2, 2);
  const page = await openPage(context);
  const images: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/image')) images.push(r.url());
  });
  await withScreenshotOnFailure(page, 'review deep link', async () => {
    await openReview(page, q.sessionId, q.ids[2]);
    await expectShown(page, q.ids[2]!, '3 / 4');
    expect(images.length).toBeGreaterThan(0);
    expect(images.every((u) => new URL(u).searchParams.has('media_token'))).toBe(true);
  });
});
