// First paint of the built page (not a timed test): navigationStart → first paint, first
// contentful paint, and the moment the app is usable (the drop zone rendered by the wasm UI),
// for dist/index.html served over HTTP and for the single file dist/proflens.html from file://.
// Each run uses a fresh browser context (cold HTTP cache, no service worker yet).
//
// Usage: bash scripts/build-release.sh && node tests/e2e/first_paint.mjs [--runs N]
// Prints one JSON line: medians (ms) and every sample.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveStatic, launch, DIST } from './lib.mjs';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1]) || 5;

// Records performance.now() when the drop zone first appears (before any test code can look).
const READY_PROBE = () => {
  const mark = () => {
    if (!window.__proflensReady && document.querySelector('[data-testid=drop-zone]')) {
      window.__proflensReady = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, { childList: true, subtree: true });
};

async function sample(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(READY_PROBE);
  const page = await context.newPage();
  await page.goto(url);
  await page.getByTestId('drop-zone').waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => window.__proflensReady
    && performance.getEntriesByName('first-contentful-paint').length > 0, null, { timeout: 60_000 });
  const t = await page.evaluate(() => {
    const paint = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null;
    const nav = performance.getEntriesByType('navigation')[0];
    return {
      first_paint_ms: paint('first-paint'),
      first_contentful_paint_ms: paint('first-contentful-paint'),
      dom_content_loaded_ms: nav ? nav.domContentLoadedEventEnd : null,
      app_ready_ms: window.__proflensReady,
    };
  });
  await context.close();
  return t;
}

const median = (v) => {
  const s = v.filter((x) => x !== null).sort((a, b) => a - b);
  return s.length ? +s[Math.floor((s.length - 1) / 2)].toFixed(1) : null;
};

const single = path.join(DIST, 'proflens.html');
const server = await serveStatic();
const browser = await launch();
const result = { runs };
try {
  const targets = [['http', server.url]];
  if (fs.existsSync(single)) targets.push(['single_file', pathToFileURL(single).href]);
  for (const [name, url] of targets) {
    await sample(browser, url); // warm-up: the OS file cache, Chromium's own start-up
    const s = [];
    for (let i = 0; i < runs; i++) s.push(await sample(browser, url));
    result[name] = Object.fromEntries(Object.keys(s[0]).map((k) => [k, median(s.map((x) => x[k]))]));
    result[`${name}_samples`] = s;
  }
  const sizes = {};
  for (const f of fs.readdirSync(DIST)) {
    if (f.endsWith('.wasm') || f === 'proflens.html') sizes[f] = fs.statSync(path.join(DIST, f)).size;
  }
  result.bytes = sizes;
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
  await server.close();
}
