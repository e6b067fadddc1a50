// The elements inside React 19, Vue 3 and Svelte 5 apps built with Vite 7 (tests/frameworks/),
// served as built under the strict CSP: the wasm is found (the figure shows the engine's weights,
// checked against the float64 reference), a property set by the framework reaches the element
// (query), the element's `change` event reaches the framework's state, and toHTML() finds the
// single-file bundle the build emitted.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { serve } from '../../scripts/serve.mjs';
import { DATA } from '../frameworks/shared/data.js';
import * as ref from '../js/reference.js';
import { startBrowser } from './support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TOLERANCE = 1e-6;

const flat = (rows) => Float64Array.from(rows.flat());
const D = DATA.Q[0].length;
const WANT = ref.attention(flat(DATA.Q), flat(DATA.K), flat(DATA.V), { dK: D }).weights;

async function plugins(framework) {
  if (framework === 'vue') {
    const { default: vue } = await import('@vitejs/plugin-vue');
    return [vue({ template: { compilerOptions: { isCustomElement: (tag) => tag.startsWith('attn-') } } })];
  }
  if (framework === 'svelte') {
    const { svelte } = await import('@sveltejs/vite-plugin-svelte');
    return [svelte({ configFile: false })];
  }
  return [];
}

describe('React, Vue and Svelte apps (Vite 7 builds)', () => {
  let browser, out;
  const built = {};
  before(async () => {
    out = await mkdtemp(path.join(tmpdir(), 'attnlens-frameworks-'));
    const { build } = await import('vite');
    for (const framework of ['react', 'vue', 'svelte']) {
      const started = Date.now();
      await build({
        configFile: false, logLevel: 'error', root: path.join(ROOT, 'tests/frameworks', framework),
        plugins: await plugins(framework),
        build: { outDir: path.join(out, framework), emptyOutDir: true, target: 'es2022', minify: false, reportCompressedSize: false },
      });
      built[framework] = Date.now() - started;
    }
    browser = await startBrowser();
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  for (const framework of ['react', 'vue', 'svelte']) {
    it(`${framework}: wasm found, weights right, a property in, an event out`, async (t) => {
      t.diagnostic(`vite build: ${built[framework]} ms`);
      const server = await serve({ root: path.join(out, framework), port: 0, index: '/index.html' });
      try {
        const page = await browser.newPage();
        await page.goto(`${server.url}/index.html`);
        const state = () => page.evaluate(async () => {
          const map = document.getElementById('map'), bars = document.getElementById('bars');
          await customElements.whenDefined('attn-heatmap');
          const ok = (await map.updateComplete) && (await bars.updateComplete);
          return { ok, error: map.error ?? bars.error, weights: Array.from(map.weights ?? []), query: map.query, barsQuery: bars.query, seen: document.getElementById('seen').textContent };
        });
        await page.waitForFunction(() => document.getElementById('map')?.weights);
        const first = await state();
        assert.equal(first.ok, true, first.error);
        assert.equal(first.weights.length, WANT.length);
        first.weights.forEach((w, i) => assert.ok(Math.abs(w - WANT[i]) <= TOLERANCE, `weight ${i}: ${w} vs ${WANT[i]}`));
        assert.deepEqual([first.query, first.barsQuery], [1, 1], 'the framework\'s initial query reached both figures');
        // Framework → element: a button in the app changes the query property.
        await page.click('#next');
        await page.waitForFunction(() => document.getElementById('map').query === 2);
        assert.equal((await state()).barsQuery, 2);
        // Element → framework: the user pins a row with the keyboard; the app shows the change event.
        await page.evaluate(() => document.getElementById('map').setState('query', 4));
        await page.waitForFunction(() => document.getElementById('seen').textContent !== 'none');
        assert.equal((await state()).seen, 'query=4');
        // The standalone export finds the single-file bundle the build emitted as an asset.
        const html = await page.evaluate(() => document.getElementById('bars').toHTML());
        assert.match(html, /^<!doctype html>[\s\S]*<script type="module" id="attnlens-bundle">[\s\S]{100000,}<\/script>[\s\S]*<attn-bars /);
        assert.deepEqual(page.problems, []);
        assert.deepEqual(browser.offHost, []);
        await page.close();
      } finally {
        await server.close();
      }
    });
  }
});
