import fs from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { sendProblem } from './problem';

/**
 * The reviewer UI (web/), served from its built files at `/`: hashed assets cached for a year,
 * and index.html — never cached — for every other page path, so a deep link (`/queue?state=review`)
 * opens the same view. In a local environment the page is told that dev-login exists. A strict
 * content-security policy: the page loads only its own script and style and talks only to this API.
 */
export function serveWebUi(opts: { dir: string; devLogin: boolean }): Router {
  const router = express.Router();
  const security = (res: express.Response) => {
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
  };
  router.use(
    '/assets',
    express.static(path.join(opts.dir, 'assets'), { immutable: true, maxAge: '365d', fallthrough: false }),
  );
  // Read again when the build changes, so a rebuilt UI needs no restart of the API.
  let page: { html: string; mtimeMs: number } | null = null;
  router.get(/^\/(?!api(\/|$)).*/, (req, res) => {
    // Only pages: a request for a file that is not there is a 404, not the app.
    if (path.extname(req.path) && !req.path.endsWith('.html')) {
      sendProblem(res, { status: 404, detail: `no file ${req.path}` });
      return;
    }
    const index = path.join(opts.dir, 'index.html');
    const built = fs.statSync(index, { throwIfNoEntry: false });
    if (!built) {
      sendProblem(res, {
        status: 503,
        detail: `the web UI is not built (no ${index}): run \`npm run build:web\` (./platform start and test do)`,
      });
      return;
    }
    if (page?.mtimeMs !== built.mtimeMs) {
      const meta = `<meta name="drivelab-dev-login" content="${opts.devLogin}" />`;
      const html = fs.readFileSync(index, 'utf8').replace('</head>', `  ${meta}\n  </head>`);
      page = { html, mtimeMs: built.mtimeMs };
    }
    security(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(page.html);
  });
  return router;
}
