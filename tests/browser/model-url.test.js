// lens.loadModel() in a page with a same-origin URL of a served model folder (docs/models.md:
// "lens.loadModel(new URL('models/gpt2/', location.href))"): a small GPT-2 folder (random weights
// in the Hub's layout, the real vocabulary) written here and served by the test server next to
// the package's files. The page's run equals Node's run of the same folder; only same-origin
// GETs of that folder's files are made, after one HEAD of its config.json; a sharded folder (no model.safetensors) loads through its
// index after the one expected 404; a URL on another origin is refused without a request.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';

import { init } from 'attnlens';

import { WEB_ROOT } from '../../scripts/serve.mjs';
import { gpt2Checkpoint, writeModelFolder } from '../js/hf-checkpoints.js';
import { assertClose } from './elements/helpers.js';
import { expectProblems, startBrowser } from './support.js';

const TEXT = 'The cat sat on the mat because it was tired.';
// Chromium runs the relaxed-SIMD build, Node the SIMD128 one: the same sums in another order.
const ENGINES = 1e-5;

// Loads the model at `href` (relative to the page) in the page and runs TEXT; plain arrays back.
const runInPage = (page, href) => page.evaluate(async ([href, text]) => {
  const { init } = await import('/web/attnlens.js');
  const lm = await (await init()).loadModel(new URL(href, location.href));
  const run = lm.run(text);
  return { kind: lm.kind, tokens: run.tokens, ids: [...run.ids], layers: run.layers.map((l) => [...l.attention]) };
}, [href, TEXT]);

describe('lens.loadModel(URL of a same-origin folder) in Chromium', () => {
  let browser, site, want;
  const checkpoint = gpt2Checkpoint({ seed: 31 });
  before(async () => {
    // The site: the package's web/ folder, and the model folders beside it.
    site = mkdtempSync(path.join(tmpdir(), 'attnlens-model-url-'));
    symlinkSync(WEB_ROOT, path.join(site, 'web'));
    for (const [name, shards] of [['gpt2', 1], ['sharded', 2]]) {
      mkdirSync(path.join(site, 'models', name), { recursive: true });
      writeModelFolder(checkpoint, { tokenizer: 'gpt2', shards, dir: path.join(site, 'models', name) });
    }
    const lm = await (await init()).loadModel(path.join(site, 'models', 'gpt2'));
    const run = lm.run(TEXT);
    want = { tokens: run.tokens, ids: [...run.ids], layers: run.layers.map((l) => Array.from(l.attention)) };
    browser = await startBrowser({ serveOptions: { root: site, index: '/web/demo/' } });
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (site) rmSync(site, { recursive: true, force: true });
  });

  /** A blank same-origin page that records the path of every request it makes. */
  async function blank() {
    const page = await browser.fixture('', { modules: [], name: 'model-url' });
    page.requested = [];
    page.on('request', (r) => page.requested.push(`${r.method()} ${new URL(r.url()).pathname}`));
    return page;
  }

  it('a folder URL: the run equals Node\'s run of the same folder; only that folder\'s files are fetched', async () => {
    const page = await blank();
    const got = await runInPage(page, '/models/gpt2/');
    assert.equal(got.kind, 'causal-lm');
    assert.deepEqual([got.tokens, got.ids], [want.tokens, want.ids]);
    assert.equal(got.layers.length, want.layers.length);
    got.layers.forEach((w, l) => assertClose(w, want.layers[l], ENGINES, `layer ${l}, Chromium vs Node`));
    const models = page.requested.filter((r) => r.includes('/models/'));
    assert.ok(models.every((r) => /^(GET|HEAD) \/models\/gpt2\/[\w.]+$/.test(r)), models.join('\n'));
    for (const file of ['config.json', 'model.safetensors', 'tokenizer.json'])
      assert.ok(models.includes(`GET /models/gpt2/${file}`), `${file} fetched: ${models.join(', ')}`);    // The folder is probed once (HEAD config.json), not once to choose the loader and again to load.
    assert.deepEqual(models.filter((r) => r.startsWith('HEAD ')), ['HEAD /models/gpt2/config.json'], models.join('\n'));
  });

  it('a sharded folder: model.safetensors answers 404, then the index and its shards load the same model', async () => {
    const page = await blank();
    const got = await expectProblems(page, [/^HTTP 404: .*\/models\/sharded\/model\.safetensors$/, /^console error: Failed to load resource: .*404/],
      () => runInPage(page, '/models/sharded/'));
    assert.deepEqual(got.ids, want.ids);
    got.layers.forEach((w, l) => assertClose(w, want.layers[l], ENGINES, `layer ${l}, sharded`));
    const shards = page.requested.filter((r) => /model-\d+-of-\d+\.safetensors$/.test(r));
    assert.deepEqual(shards.sort(), ['GET /models/sharded/model-00001-of-00002.safetensors', 'GET /models/sharded/model-00002-of-00002.safetensors']);
  });

  it('a URL on another origin is refused, naming the origins, and nothing is requested', async () => {
    const page = await blank();
    const message = await page.evaluate(async () => {
      const { init } = await import('/web/attnlens.js');
      const lens = await init();
      return lens.loadModel(new URL('http://127.0.0.2:9/models/gpt2/model.safetensors')).then(() => null, (e) => `${e.name}: ${e.message}`);
    });
    assert.match(message, /^TypeError: http:\/\/127\.0\.0\.2:9\/models\/gpt2\/model\.safetensors is on another origin than this page \(http:\/\/127\.0\.0\.1:\d+\)/);
    assert.deepEqual(page.requested.filter((r) => r.includes('127.0.0.2') || r.includes('/models/')), []);
    assert.deepEqual(browser.offHost, []);
  });
});
