// Notebooks: `attnlens python` writes attnlens_nb.py; a notebook using it with attention shaped
// like Hugging Face's `output_attentions=True` (a tuple of per-layer [batch, heads, n, n]
// tensors, faked here with objects that have .tolist(), as torch is not installed) is executed
// headless by nbconvert. Its inline output, opened in Chromium from file:// with every request
// refused, draws the weights it was given; the SVG it saved equals the command line's. Served by
// the classic Notebook (Debian's jupyter-notebook 6) and opened in Chromium, the trusted
// notebook's output draws the same weights with no request off 127.0.0.1. (JupyterLab is not
// packaged in Debian 12, so it is not run here.)
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { render } from '../../web/cli/render.js';
import { requireDependency, startBrowser } from './support.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../web/cli/attnlens.js', import.meta.url));
const NBCONVERT = '/usr/bin/jupyter-nbconvert';
const NOTEBOOK_SERVER = '/usr/bin/jupyter-notebook';

/** A TCP port free on 127.0.0.1 right now. */
const freePort = () => new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
});

const code = (source) => ({ cell_type: 'code', metadata: {}, execution_count: null, outputs: [], source });
const NOTEBOOK = {
  nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  cells: [
    code(`import json, math
import attnlens_nb as attnlens

class FakeTensor:  # what torch gives: .tolist() of [batch, heads, n, n]
    def __init__(self, value): self.value = value
    def tolist(self): return self.value

tokens = ["[CLS]", "the", "cat", "<sat>", "&", "[SEP]"]
n, heads, layers = len(tokens), 3, 2
def row(l, h, i):
    w = [math.exp(-abs(i - j - l + h) * (1 + h) / 2) for j in range(n)]
    return [x / sum(w) for x in w]
attentions = tuple(FakeTensor([[[row(l, h, i) for i in range(n)] for h in range(heads)]]) for l in range(layers))
json.dump(attnlens.attention_data(attentions, tokens), open("data.json", "w"))`),
    code('attnlens.show(attentions, tokens, figure="heatmap", layer=1, head=2, query="cat")'),
    code('attnlens.inline(attentions, tokens, figure="heads", theme="dark")'),
    code('print(attnlens.save("bars.svg", attentions, tokens, figure="bars", layer=1, head=0, query=2))'),
  ],
};

describe('Jupyter notebook (nbconvert, headless)', () => {
  let dir, executed, browser;
  before(async () => {
    requireDependency(NBCONVERT, existsSync(NBCONVERT), 'scripts/setup.sh installs jupyter-nbconvert');
    dir = await mkdtemp(path.join(tmpdir(), 'attnlens-notebook-'));
    await writeFile(path.join(dir, 'attnlens_nb.py'), (await run(process.execPath, [CLI, 'python'])).stdout);
    await writeFile(path.join(dir, 'figures.ipynb'), JSON.stringify(NOTEBOOK));
    await run(NBCONVERT, ['--to', 'notebook', '--execute', '--ExecutePreprocessor.timeout=120', 'figures.ipynb', '--output', 'executed.ipynb'],
      { cwd: dir, env: { ...process.env, PATH: `/usr/bin:${process.env.PATH}` } });
    executed = JSON.parse(await readFile(path.join(dir, 'executed.ipynb'), 'utf8'));
    browser = await startBrowser();
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const htmlOutput = (cell) => {
    const out = executed.cells[cell].outputs.find((o) => o.data?.['text/html']);
    assert.ok(out, `cell ${cell} has an HTML output: ${JSON.stringify(executed.cells[cell].outputs).slice(0, 300)}`);
    return [].concat(out.data['text/html']).join('');
  };

  /** The output in a page of its own, from file://, every request but the page refused; the figure in its iframe. */
  async function openOutput(html, name) {
    const file = path.join(dir, `${name}.html`);
    await writeFile(file, `<!doctype html><html><head><meta charset="utf-8"><title>${name}</title></head><body>${html}</body></html>`);
    const page = await browser.newPage();
    const url = pathToFileURL(file).href;
    page.requests = [];
    page.on('request', (r) => page.requests.push(r.url()));
    await page.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
    await page.goto(url);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame, 'the output is an iframe');
    const figure = await frame.evaluate(async () => {
      const el = document.querySelector('attn-heatmap, attn-heads, attn-bars');
      await customElements.whenDefined(el.localName);
      const ok = await el.updateComplete;
      return { ok, error: el.error, tag: el.localName, layer: el.layer, head: el.head, query: el.query, tokens: el.tokens, weights: Array.from(el.weights ?? []), theme: el.getAttribute('theme') };
    });
    return { page, figure, url };
  }

  it('the inline heatmap draws the weights it was given, offline', async () => {
    const data = JSON.parse(await readFile(path.join(dir, 'data.json'), 'utf8'));
    const { page, figure, url } = await openOutput(htmlOutput(1), 'heatmap');
    assert.equal(figure.ok, true, figure.error);
    assert.deepEqual([figure.tag, figure.layer, figure.head, figure.query], ['attn-heatmap', 1, 2, 2]);
    assert.deepEqual(figure.tokens, data.tokens);
    assert.deepEqual(figure.weights, Array.from(Float32Array.from(data.attention[1][2].flat())));
    assert.deepEqual(page.requests, [url], 'no request but the page itself');
    assert.deepEqual(page.problems, []);
    assert.deepEqual(browser.offHost, []);
    await page.close();
  });

  it('a figure as a cell\'s value (inline) shows too; save() wrote the command line\'s SVG', async () => {
    const { page, figure } = await openOutput(htmlOutput(2), 'heads');
    assert.equal(figure.ok, true, figure.error);
    assert.deepEqual([figure.tag, figure.theme], ['attn-heads', 'dark']);
    await page.close();
    const data = JSON.parse(await readFile(path.join(dir, 'data.json'), 'utf8'));
    assert.equal(await readFile(path.join(dir, 'bars.svg'), 'utf8'), await render(data, { figure: 'bars', layer: 1, head: 0, query: 2 }));
    assert.deepEqual(executed.cells[3].outputs.map((o) => o.text).join('').trim(), 'bars.svg');
  });

  it('in the classic Notebook (Debian\'s jupyter-notebook, the notebook trusted): the output draws the same weights', async () => {
    requireDependency(NOTEBOOK_SERVER, existsSync(NOTEBOOK_SERVER), 'scripts/setup.sh installs jupyter-notebook');
    // Trusted as `jupyter trust` would (a signature in a database of this test's own), then served.
    const db = path.join(dir, 'signatures.db');
    await run('/usr/bin/python3', ['-c', `import nbformat
from nbformat.sign import NotebookNotary
nb = nbformat.read("executed.ipynb", 4)
NotebookNotary(db_file=${JSON.stringify(db)}).sign(nb)`], { cwd: dir });
    const port = await freePort();
    const server = spawn(NOTEBOOK_SERVER, ['--no-browser', '--allow-root', '--ip=127.0.0.1', `--port=${port}`, '--port-retries=0',
      "--NotebookApp.token=''", "--NotebookApp.password=''", `--NotebookApp.notebook_dir=${dir}`, `--NotebookNotary.db_file=${db}`],
    { cwd: dir, env: { ...process.env, PATH: `/usr/bin:${process.env.PATH}`, JUPYTER_RUNTIME_DIR: path.join(dir, 'runtime'), JUPYTER_CONFIG_DIR: path.join(dir, 'config') }, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await new Promise((resolve, reject) => {
        let log = '';
        server.stderr.on('data', (chunk) => { log += chunk; if (log.includes(`127.0.0.1:${port}/`)) resolve(); });
        server.once('exit', (code) => reject(new Error(`jupyter-notebook exited (${code}): ${log}`)));
      });
      // The Notebook app's own console (its widgets extension, not packaged in Debian, answers 404)
      // is not ours: record what the output frames (srcdoc iframes) report, and every page error.
      const page = await browser.context.newPage(), ours = [];
      const inOutput = (frame) => frame && frame !== page.mainFrame();
      page.on('console', (m) => { if (/^(error|warning)$/.test(m.type()) && !m.location().url.startsWith(`http://127.0.0.1:${port}/`)) ours.push(`console ${m.type()}: ${m.text()}`); });
      page.on('pageerror', (e) => ours.push(`page error: ${e.message}`));
      page.on('requestfailed', (r) => { if (inOutput(r.frame())) ours.push(`request failed: ${r.url()}`); });
      await page.goto(`http://127.0.0.1:${port}/notebooks/executed.ipynb`);
      await page.waitForFunction(() => document.querySelectorAll('.output_area iframe').length >= 2);
      // The first output's iframe (the heatmap), once its srcdoc document has the element.
      const frame = await (await page.locator('.output_area iframe').first().elementHandle()).contentFrame();
      await frame.waitForFunction(() => document.querySelector('attn-heatmap'));
      const figure = await frame.evaluate(async () => {
        const el = document.querySelector('attn-heatmap');
        await customElements.whenDefined('attn-heatmap');
        return { ok: await el.updateComplete, error: el.error, query: el.query, weights: Array.from(el.weights) };
      });
      const data = JSON.parse(await readFile(path.join(dir, 'data.json'), 'utf8'));
      assert.equal(figure.ok, true, figure.error);
      assert.equal(figure.query, 2);
      assert.deepEqual(figure.weights, Array.from(Float32Array.from(data.attention[1][2].flat())));
      assert.deepEqual(browser.offHost, [], 'nothing left 127.0.0.1');
      assert.deepEqual(ours, [], 'the outputs\' console errors, page errors and failed requests');
      await page.close();
    } finally {
      server.kill();
    }
  });
});
