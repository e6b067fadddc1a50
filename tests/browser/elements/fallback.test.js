import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';

// What an author puts inside a figure's tag is its fallback: shown where scripts do not run,
// replaced by the figure where they do.
const BODY = `<attn-heatmap id="fig" tokens="a b c" q="[[1,0],[0,1],[1,1]]" k="[[1,0],[0,1],[1,1]]">
  <p id="fallback">Attention of a, b, c: a looks at a and c.</p>
</attn-heatmap>`;

describe('fallback content inside a figure', () => {
  let scripted, unscripted;
  before(async () => {
    scripted = await startBrowser();
    unscripted = await startBrowser({ contextOptions: { javaScriptEnabled: false } });
  });
  after(async () => {
    await scripted?.close();
    await unscripted?.close();
  });

  it('is what a reader sees without JavaScript', async () => {
    const page = await unscripted.fixture(BODY, { name: 'fallback-off' });
    assert.equal(await page.isVisible('#fallback'), true);
    assert.match(await page.textContent('#fallback'), /a looks at a and c/);
    assert.deepEqual(unscripted.offHost, []);
  });

  it('gives way to the figure when the elements run', async () => {
    const page = await scripted.fixture(BODY, { name: 'fallback-on' });
    const drawn = await page.evaluate(async () => {
      const el = document.getElementById('fig');
      await customElements.whenDefined('attn-heatmap');
      return { ok: await el.updateComplete, n: el.tokens.length };
    });
    assert.deepEqual(drawn, { ok: true, n: 3 });
    assert.equal(await page.isVisible('#fallback'), false);
    assert.deepEqual(page.problems, []);
    assert.deepEqual(scripted.offHost, []);
  });
});
