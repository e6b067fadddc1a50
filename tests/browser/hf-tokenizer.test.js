// web/model/hf-tokenizer.js in headless Chromium, with no build step (a plain page imports the
// module from the package folder; it finds web/dist/hf-tokenizers.mjs by its relative URL) and
// bundled by Vite 7: GPT-2's and BERT's tokenizer.json give the ids gpt-3-encoder and Node give,
// errors arrive as ModelFormatError, and no request leaves the page's origin.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { serve } from '../../scripts/serve.mjs';
import { loadHfTokenizer } from '../../web/model/hf-tokenizer.js';
import * as fx from '../js/hf-fixtures.js';
import { startBrowser } from './support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const gpt3Encoder = createRequire(import.meta.url)('gpt-3-encoder');
const TEXTS = ['Hello world', "I'm sure it's fine, isn't it?", 'naïve café 日本語 😀 👨‍👩‍👧', 'a  b\t\tc\n\n', '12345 3.14', 'x'.repeat(200)];

/** What the page reports: ids per text for GPT-2 and BERT, readable tokens, and two errors. */
async function runInPage(page, moduleUrl) {
  return page.evaluate(async ({ moduleUrl, texts }) => {
    const { loadHfTokenizer } = await import(moduleUrl);
    const [gpt2Json, bertJson] = await Promise.all(['gpt2', 'bert'].map((n) => fetch(`/__data__/${n}.json`).then((r) => r.arrayBuffer())));
    const gpt2 = await loadHfTokenizer({ tokenizer: gpt2Json, names: { tokenizer: 'gpt2/tokenizer.json' } });
    const bert = await loadHfTokenizer({ tokenizer: new TextDecoder().decode(bertJson) });
    const errors = [];
    for (const tokenizer of ['{"model":', '{"model": {"type": "WordLevel", "vocab": {}}}'])
      await loadHfTokenizer({ tokenizer, names: { tokenizer: 'broken/tokenizer.json' } }).catch((e) => errors.push(`${e.name}: ${e.message}`));
    return {
      gpt2: texts.map((t) => Array.from(gpt2.encode(t).ids)),
      bert: texts.map((t) => Array.from(bert.encode(t, { pair: 'second' }).ids)),
      bertTypes: Array.from(bert.encode('a', { pair: 'b' }).typeIds),
      tokens: gpt2.encode(' world 日').tokens,
      decoded: gpt2.decode(gpt2.encode(texts[2]).ids),
      errors,
    };
  }, { moduleUrl, texts: TEXTS });
}

describe('hf-tokenizer in headless Chromium', () => {
  let browser, files, wantBert, wantTokens, bundleDir;
  before(async () => {
    files = { gpt2: JSON.stringify(fx.gpt2TokenizerJson()), bert: JSON.stringify(fx.bertTokenizerJson()) };
    const bert = await loadHfTokenizer({ tokenizer: files.bert });
    wantBert = TEXTS.map((t) => Array.from(bert.encode(t, { pair: 'second' }).ids));
    wantTokens = (await loadHfTokenizer({ tokenizer: files.gpt2 })).encode(' world 日').tokens;
    browser = await startBrowser();
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
  });

  function check(got) {
    got.gpt2.forEach((ids, i) => assert.deepEqual(ids, gpt3Encoder.encode(TEXTS[i]), `GPT-2 ${JSON.stringify(TEXTS[i])}`));
    got.bert.forEach((ids, i) => assert.deepEqual(ids, wantBert[i], `BERT ${JSON.stringify(TEXTS[i])}`));
    assert.deepEqual(got.bertTypes, [0, 0, 0, 1, 1]);
    assert.deepEqual(got.tokens, wantTokens);
    assert.deepEqual(got.tokens, [' world', ' <0xE6>', '<0x97>', '<0xA5>']);
    assert.equal(got.decoded, TEXTS[2]);
    assert.equal(got.errors.length, 2);
    assert.match(got.errors[0], /^ModelFormatError: broken\/tokenizer\.json: not valid JSON/);
    assert.match(got.errors[1], /^ModelFormatError: broken\/tokenizer\.json: the tokenizer model type "WordLevel" is not supported/);
  }

  /** A page of `server` that serves the two tokenizer.json files at /__data__/. */
  async function pageWithData(serverUrl, htmlPath) {
    const page = await browser.newPage();
    await page.route(`${serverUrl}/__data__/**`, (route) => {
      const name = path.basename(new URL(route.request().url()).pathname, '.json');
      return route.fulfill({ status: 200, headers: { 'Content-Type': 'application/json' }, body: files[name] });
    });
    await page.goto(`${serverUrl}${htmlPath}`);
    return page;
  }

  it('a plain page imports web/model/hf-tokenizer.js with no build step and gets the same ids', async () => {
    const page = await browser.fixture('<p>tokenizer</p>', { modules: [], name: 'hf-tokenizer' });
    await page.route(`${browser.url}/__data__/**`, (route) => {
      const name = path.basename(new URL(route.request().url()).pathname, '.json');
      return route.fulfill({ status: 200, headers: { 'Content-Type': 'application/json' }, body: files[name] });
    });
    const requests = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    check(await runInPage(page, '/model/hf-tokenizer.js'));
    assert.ok(requests.includes('/dist/hf-tokenizers.mjs'), `the library from web/dist: ${requests.join(' ')}`);
    assert.deepEqual(page.problems, []);
    assert.deepEqual(browser.offHost, []);
    await page.close();
  });

  it('a Vite 7 bundle of a page importing it gets the same ids', async (t) => {
    bundleDir = await mkdtemp(path.join(tmpdir(), 'attnlens-hf-tokenizer-'));
    const src = path.join(bundleDir, 'src');
    await mkdir(src);
    await writeFile(path.join(src, 'index.html'), '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bundle</title>' +
      '<link rel="icon" href="data:,"><script type="module" src="./main.js"></script></head><body></body></html>');
    await writeFile(path.join(src, 'main.js'),
      `import { loadHfTokenizer } from ${JSON.stringify(path.join(ROOT, 'web/model/hf-tokenizer.js'))};\n` +
      'window.hfTokenizer = { loadHfTokenizer };\n');
    const started = Date.now();
    const { build } = await import('vite');
    await build({ configFile: false, logLevel: 'error', root: src,
      build: { outDir: path.join(bundleDir, 'out'), emptyOutDir: true, target: 'es2022', minify: true, reportCompressedSize: false } });
    // runInPage() imports a module URL: a tiny one re-exporting what the bundle put on window.
    await writeFile(path.join(bundleDir, 'out', 'entry.js'), 'export const { loadHfTokenizer } = window.hfTokenizer;\n');
    t.diagnostic(`vite build: ${Date.now() - started} ms`);
    const server = await serve({ root: path.join(bundleDir, 'out'), port: 0, index: '/index.html' });
    try {
      const page = await pageWithData(server.url, '/index.html');
      await page.waitForFunction(() => window.hfTokenizer);
      check(await runInPage(page, '/entry.js'));
      assert.deepEqual(page.problems, []);
      assert.deepEqual(browser.offHost, []);
      await page.close();
    } finally {
      await server.close();
    }
  });
});
