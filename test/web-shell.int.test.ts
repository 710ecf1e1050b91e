import type { BrowserContext } from 'playwright-core';
import { hashPassword } from '../api/auth/passwords';
import { createFrame } from '../testkit/annotations';
import { eventually, openPage, useWebUiForFile, withScreenshotOnFailure } from '../testkit/browser';

/**
 * The reviewer UI's shell and review queue in Debian's Chromium against the real API and
 * PostgreSQL: sign-in (password and local dev-login), deep links kept across sign-in, roles shown,
 * sign-out, an ended session sent back to sign-in, the queue's filters, rank reasons, infinite
 * scroll, readable errors and the live notice from the jobs stream.
 */
const ctx = useWebUiForFile({ APP_ENV: 'local' });

let context: BrowserContext;
const PASSWORD = 'correct horse battery staple';
let reviewer: { email: string };
let sessionId: string;
let otherSessionId: string;

beforeAll(async () => {
  const { db } = ctx.api.deps;
  const user = await db.user.create({
    data: {
      email: 'rita@example.org',
      name: 'Rita Reviewer',
      role: 'reviewer',
      passwordHash: await hashPassword(PASSWORD),
    },
  });
  reviewer = { email: user.email };
  // 130 objects to review on one session (more than one page of 100), 3 on another.
  const { frame, sessionId: s1 } = await createFrame(ctx.api.deps);
  sessionId = s1;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  const person = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'person' } });
  await db.annoObject.createMany({
    data: Array.from({ length: 130 }, (_, i) => ({
      frameId: frame.id,
      bbox: [i, i, i + 20, i + 20],
      classId: i % 10 === 0 ? person.id : car.id,
      conf: 0.3 + (i % 50) / 100,
      source: 'fused',
      state: 'review',
    })),
  });
  const other = await createFrame(ctx.api.deps);
  otherSessionId = other.sessionId;
  const made = await db.annoObject.create({
    data: {
      frameId: other.frame.id,
      bbox: [1, 1, 9, 9],
      classId: person.id,
      conf: 0.5,
      source: 'fused',
      state: 'review',
    },
  });
  await db.provenance.create({ data: { objectId: made.id, paths: ['closed_set', 'open_vocab'] } });
}, 60_000);

beforeEach(async () => {
  context = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } });
});
afterEach(async () => {
  await context?.close();
});

const at = (p: string) => ctx.at(p);

async function signIn(page: Awaited<ReturnType<typeof openPage>>, email: string, password: string) {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

it('signs in with a password and comes back to the deep link it was sent from', async () => {
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'sign-in deep link', async () => {
    await page.goto(at(`/queue?session_id=${otherSessionId}&state=review`));
    await page.waitForURL(/\/signin\?next=/);
    await signIn(page, reviewer.email, 'wrong password');
    await eventually(async () =>
      expect(await page.getByRole('alert').innerText()).toMatch(/wrong e-mail or password/),
    );
    await signIn(page, reviewer.email, PASSWORD);
    await page.waitForURL(at(`/queue?session_id=${otherSessionId}&state=review`));
    await eventually(async () =>
      expect(await page.getByTestId('who').innerText()).toMatch(/Rita Reviewer\s*reviewer/i),
    );
    // The deep link's filter is applied: only the other session's one object.
    await eventually(async () => expect(await page.locator('tbody tr').count()).toBe(1));
    await eventually(async () =>
      expect(await page.locator('tbody tr').first().innerText()).toMatch('closed_set, open_vocab'),
    );
    expect(page.problems).toEqual([]);
  });
});

it('offers dev-login in a local environment, shows the role, and signs out', async () => {
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'dev-login and sign-out', async () => {
    await page.goto(at('/'));
    await page.getByRole('button', { name: /local developer/ }).click();
    await page.waitForURL(at('/queue'));
    await eventually(async () => expect(await page.getByTestId('who').innerText()).toMatch(/admin/i));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/signin/);
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  });
});

it('ranks the queue with its reasons and loads the next page as the list scrolls', async () => {
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'queue scroll', async () => {
    await page.goto(at(`/signin?next=${encodeURIComponent(`/queue?session_id=${sessionId}`)}`));
    await signIn(page, reviewer.email, PASSWORD);
    const rows = page.locator('tbody tr');
    await eventually(async () => expect(await rows.count()).toBe(100));
    // The rarer class comes first at equal uncertainty, and each row says why: u × r = score.
    await eventually(async () => expect(await rows.first().innerText()).toMatch('person'));
    const why = await rows.first().locator('.why').innerText();
    const [u, r, score] = why.match(/[\d.]+/g)!.map(Number);
    expect(score!).toBeCloseTo(u! * r!, 2);
    await page.locator('.sentinel').scrollIntoViewIfNeeded();
    await eventually(async () => expect(await rows.count()).toBe(130));
    await eventually(async () =>
      expect(await page.locator('.sentinel').innerText()).toBe('130 objects — the end of the queue.'),
    );
    // Narrowing by class through the form keeps the filter in the URL.
    await page.getByLabel('Class').fill('person');
    await page.getByRole('button', { name: 'Apply' }).click();
    await eventually(async () => expect(await rows.count()).toBe(13));
    expect(new URL(page.url()).searchParams.get('class_name')).toBe('person');
  });
});

it('says in the API’s words what was wrong with a filter', async () => {
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'queue filter error', async () => {
    await page.goto(at(`/signin?next=${encodeURIComponent('/queue?class_name=unicorn')}`));
    await signIn(page, reviewer.email, PASSWORD);
    await eventually(async () => expect(await page.getByRole('alert').innerText()).toMatch(/unicorn/));
  });
});

it('sends a user whose token stopped working to sign-in, and back to the same place', async () => {
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'ended session', async () => {
    await page.goto(at(`/signin?next=${encodeURIComponent(`/queue?session_id=${otherSessionId}`)}`));
    await signIn(page, reviewer.email, PASSWORD);
    await eventually(async () => expect(await page.locator('tbody tr').count()).toBe(1));
    // An admin revokes every token of the user: the next request answers 401.
    const user = await ctx.api.deps.db.user.findUniqueOrThrow({ where: { email: reviewer.email } });
    expect(
      (await ctx.api.call('POST', `/api/users/${user.id}/revoke-tokens`, { token: ctx.token.admin })).status,
    ).toBe(200);
    // A click, not check(): the box may never show as checked, since the request it makes ends the
    // session and the page leaves for sign-in.
    await page.getByRole('group', { name: 'States' }).getByLabel('accepted').click();
    await page.waitForURL(/\/signin\?next=/);
    await eventually(async () =>
      expect(await page.locator('.notice').innerText()).toMatch(/session has ended/),
    );
    await signIn(page, reviewer.email, PASSWORD);
    await page.waitForURL(/\/queue\?session_id=/);
    expect(new URL(page.url()).searchParams.get('session_id')).toBe(otherSessionId);
  });
});

it('tells the reviewer when auto-label adds objects to the queue in view', async () => {
  const page = await openPage(context);
  await withScreenshotOnFailure(page, 'live notice', async () => {
    await page.goto(at(`/signin?next=${encodeURIComponent(`/queue?session_id=${otherSessionId}`)}`));
    await signIn(page, reviewer.email, PASSWORD);
    await eventually(async () => expect(await page.locator('tbody tr').count()).toBe(1));
    const { db } = ctx.api.deps;
    const frame = await db.frame.findFirstOrThrow({ where: { sessionId: otherSessionId } });
    await db.annoObject.create({
      data: {
        frameId: frame.id,
        bbox: [2, 2, 8, 8],
        classId: 1,
        conf: 0.4,
        source: 'fused',
        state: 'review',
      },
    });
    // Give the page's stream a moment to connect before the event is published.
    await page.waitForTimeout(500);
    await ctx.api.deps.events.publish('jobs', 'autolabel.progress', {
      session_id: otherSessionId,
      frames_done: 1,
    });
    await page.getByRole('button', { name: 'Show them' }).click();
    await eventually(async () => expect(await page.locator('tbody tr').count()).toBe(2));
  });
});

it('serves deep links as the app, assets with long caching, and a missing asset as 404', async () => {
  const page = await ctx.api.call('GET', '/queue?state=review');
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  expect(page.headers.get('cache-control')).toBe('no-cache');
  expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
  const script = String(page.body).match(/src="(\/assets\/app-[^"]+\.js)"/)![1]!;
  const asset = await fetch(at(script));
  expect(asset.status).toBe(200);
  expect(asset.headers.get('cache-control')).toMatch(/immutable/);
  expect((await ctx.api.call('GET', '/assets/nope.js')).status).toBe(404);
  expect((await ctx.api.call('GET', '/favicon.ico')).status).toBe(404);
  // /api stays the API's: an unknown API path is never the app.
  expect((await ctx.api.call('GET', '/api/nope', { token: ctx.token.admin })).status).toBe(404);
});
