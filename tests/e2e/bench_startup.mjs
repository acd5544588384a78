// Page start-up benchmark ("first paint of the page measured"; not a timed test). For
// the served page (dist/ over the tests' static server, service worker blocked, so every run is
// a first visit) and the single file (dist/proflens.html from file://), each run prints one JSON
// line: first paint and first contentful paint (the browser's paint timing), the drop zone on screen (the app's wasm fetched, compiled and
// mounted: the page can be used; the workers start at the first drop, not here), and the bytes
// transferred for the served page. Every line carries the load average.
//
// Usage: bash scripts/build-release.sh && node tests/e2e/bench_startup.mjs [--runs N]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, serveStatic, launch, loadAvg } from './lib.mjs';

const args = process.argv.slice(2);
const runs = Number(args.includes('--runs') ? args[args.indexOf('--runs') + 1] : 3) || 3;

/** One cold start of `url` in a fresh context: timings in ms from navigation start. */
async function startOnce(browser, url, label, run) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  const bodies = [];
  page.on('response', (r) => bodies.push(r.body().then((b) => b.length, () => 0)));
  const load = loadAvg();
  await page.goto(url);
  await page.getByTestId('drop-zone').waitFor({ timeout: 120_000 });
  const dropZoneMs = await page.evaluate(() => performance.now());
  const t = await page.evaluate(() => {
    const paint = Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
    const nav = performance.getEntriesByType('navigation')[0];
    return {
      first_paint_ms: paint['first-paint'] ?? null,
      first_contentful_paint_ms: paint['first-contentful-paint'] ?? null,
      dom_content_loaded_ms: nav ? nav.domContentLoadedEventEnd : null,
    };
  });
  const bytes = (await Promise.all(bodies)).reduce((a, b) => a + b, 0);
  const r0 = (x) => (x === null || x === undefined ? null : Math.round(x));
  console.log(JSON.stringify({
    side: 'startup', page: label, run, load,
    first_paint_ms: r0(t.first_paint_ms), first_contentful_paint_ms: r0(t.first_contentful_paint_ms),
    dom_content_loaded_ms: r0(t.dom_content_loaded_ms), drop_zone_ms: r0(dropZoneMs),
    bytes_transferred: label === 'served' ? bytes : null,
  }));
  await context.close();
}

const server = await serveStatic();
const browser = await launch();
try {
  for (let i = 1; i <= runs; i++) {
    await startOnce(browser, server.url, 'served', i);
    await startOnce(browser, pathToFileURL(path.join(DIST, 'proflens.html')).href, 'single file', i);
  }
} finally {
  await browser.close();
  await server.close();
}
