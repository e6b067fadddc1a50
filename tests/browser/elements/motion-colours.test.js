// Readers' settings, in Chromium (which emulates both media features): prefers-reduced-motion
// stops Scan and Play from animating on their own while stepping still works; forced-colors
// keeps selection, the pinned row, bar lengths and focus visible; and Tab alone reaches every
// control of every figure, each with a visible focus ring.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { FIGURES_BODY, FIGURES_DATA, ONE } from '../engine-pages.js';
import { startBrowser } from '../support.js';
import { tabWalk } from '../tab-walk.js';
import { assertClean, assertClose, readHeatmap, ref } from './helpers.js';

const IDS = [...FIGURES_BODY.matchAll(/<attn-[a-z]+ id="([^"]+)"/g)].map((m) => m[1]).filter((id) => id !== 'broken');
const SCAN_MS = 1100;  // attn-bars' timer period
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

async function figures(browser) {
  const page = await browser.fixture(FIGURES_BODY, { name: 'settings' });
  const drawn = await page.evaluate(async ({ data, ids }) => {
    await Promise.all(ids.map((id) => customElements.whenDefined(document.getElementById(id).localName)));
    for (const [id, d] of Object.entries(data)) document.getElementById(id).data = d;
    const out = [];
    for (const id of ids) out.push(await document.getElementById(id).updateComplete);
    return out;
  }, { data: FIGURES_DATA, ids: IDS });
  assert.ok(drawn.every(Boolean), 'every figure draws');
  return page;
}

const motion = (page) => page.evaluate(() => {
  const bars = document.getElementById('bars'), g = document.getElementById('generate');
  return { query: bars.query, scanning: bars.scanning, current: g.current, playing: g.playing };
});
const press = (page, id, selector) => page.locator(`#${id}`).locator(selector).click();

describe('reader settings: reduced motion, forced colours, keyboard alone', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 1000, height: 900 } });
    page = await figures(browser);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('without reduced motion, Scan and Play animate on their own (the control case)', async () => {
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    await page.evaluate(() => { document.getElementById('generate').current = -1; });
    const start = await motion(page);
    await press(page, 'bars', 'button.scan');
    await press(page, 'generate', 'button.play');
    await page.waitForFunction((q) => document.getElementById('bars').query !== q, start.query);
    await page.waitForFunction(() => document.getElementById('generate').current >= 1);
    const moving = await motion(page);
    assert.equal(moving.scanning, true);
    await page.evaluate(() => { document.getElementById('bars').stop(); document.getElementById('generate').pause(); });
    assertClean(page, browser);
  });

  it('prefers-reduced-motion: Scan and Play take one step and stop; stepping still works', async () => {
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.evaluate(() => { document.getElementById('bars').query = 0; document.getElementById('generate').current = -1; });
    await press(page, 'bars', 'button.scan');
    await press(page, 'generate', 'button.play');
    const stepped = await motion(page);
    assert.deepEqual(stepped, { query: 1, scanning: false, current: 0, playing: false }, 'one step each, no timer');
    await pause(2.5 * SCAN_MS);  // longer than two periods of either timer: nothing moved by itself
    assert.deepEqual(await motion(page), stepped, 'nothing moves on its own');
    await press(page, 'bars', 'button.scan');
    await page.locator('#generate').locator('button.play').focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await motion(page), { query: 2, scanning: false, current: 1, playing: false }, 'each press steps once more');
    // The bars' transitions are off too (the shared stylesheet).
    const transition = await page.evaluate(() => getComputedStyle(document.getElementById('bars').shadowRoot.querySelector('.fill')).transitionDuration);
    assert.match(transition, /^0s/);
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    assertClean(page, browser);
  });

  it('forced-colors: selection, pinned row, current step, bar lengths and focus stay visible; canvases keep their weights', async () => {
    await page.emulateMedia({ forcedColors: 'active' });
    await page.evaluate(async () => {
      document.getElementById('heads').layer = 0;
      document.getElementById('heads').head = 1;
      document.getElementById('pipeline').query = 3;
      await new Promise((r) => requestAnimationFrame(r));
    });
    const look = await page.evaluate(() => {
      const root = (id) => document.getElementById(id).shadowRoot, style = (el) => getComputedStyle(el);
      const tabs = [...root('pipeline').querySelectorAll('[role="tab"]')];
      const on = tabs.find((t) => t.getAttribute('aria-selected') === 'true'), off = tabs.find((t) => t !== on);
      const thumbs = [...root('heads').querySelectorAll('[role="gridcell"]')];
      const picked = thumbs.find((t) => t.getAttribute('aria-selected') === 'true'), other = thumbs.find((t) => t !== picked);
      const row = root('pipeline').querySelector('tr.query td');
      const bar = root('bars').querySelector('.fill'), track = root('bars').querySelector('.track');
      const query = root('bars').querySelector('.queries [aria-checked="true"]'), plain = root('bars').querySelector('.queries [aria-checked="false"]');
      return {
        forced: matchMedia('(forced-colors: active)').matches,
        tab: [style(on).backgroundColor, style(off).backgroundColor],
        thumb: [style(picked).borderTopColor, style(other).borderTopColor],
        row: [style(row).outlineStyle, style(row).outlineWidth],
        bar: [style(bar).backgroundColor, style(track).backgroundColor],
        query: [style(query).backgroundColor, style(plain).backgroundColor],
      };
    });
    assert.equal(look.forced, true);
    assert.notEqual(look.tab[0], look.tab[1], 'the selected pipeline tab differs from the others');
    assert.notEqual(look.thumb[0], look.thumb[1], 'the selected head has its own border');
    assert.deepEqual(look.row, ['solid', '2px'], 'the pipeline\'s query row is outlined');
    assert.notEqual(look.bar[0], look.bar[1], 'bar lengths stay visible against their track');
    assert.notEqual(look.query[0], look.query[1], 'the chosen query stands out');
    await page.locator('#heatmap').locator('.plot').focus();
    await page.keyboard.press('ArrowDown');
    const ring = await page.evaluate(() => { const s = getComputedStyle(document.getElementById('heatmap').shadowRoot.querySelector('.plot')); return [s.outlineStyle, parseFloat(s.outlineWidth)]; });
    assert.equal(ring[0], 'solid');
    assert.ok(ring[1] >= 2, `focus ring ${ring[1]}px`);
    const drawn = await readHeatmap(page, 'heatmap');
    assertClose(drawn.values, Array.from(ref.attention(ONE.q, ONE.k, ONE.v, { dK: 4 }).weights), 1.5 / 255 / 0.7, 'heatmap under forced colours');
    await page.emulateMedia({ forcedColors: 'none' });
    assertClean(page, browser);
  });

  it('Tab alone reaches every control of every figure, each with a visible focus ring', async () => {
    const walk = await tabWalk(page, IDS, { pressTab: () => page.keyboard.press('Tab') });
    assert.deepEqual(walk.missed, [], 'controls Tab never reached');
    assert.deepEqual(walk.unringed, [], 'controls without a visible focus ring');
    assert.ok(walk.reached.length >= 20, `${walk.reached.length} tab stops`);
    assertClean(page, browser);
  });
});
