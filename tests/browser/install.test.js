// The packed tarball, installed offline into a fresh folder, used the ways a web author would, in
// headless Chromium, every page served from 127.0.0.1 with the strict Content-Security-Policy
// (script-src 'self' 'wasm-unsafe-eval', no 'unsafe-eval', set as a response header):
//   - a Vite 7 project importing the engine and the elements, built, then served as built;
//   - a static page: the package's files copied next to a plain HTML file, one module script;
//   - the single-file build, the only file next to its HTML page;
//   - a lean page: one heatmap from the minified build (web/dist/elements/), its requests and their
//     gzipped bytes counted against the budget of issue 18 (≤ 100 KB in ≤ 8 requests);
//   - the elements given malformed and hostile data.
// Each checks that the wasm is found, the figures show the engine's weights, nothing was
// evaluated from strings (the CSP would report it), and no request left 127.0.0.1.
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

import { STRICT_CSP } from '../../scripts/serve.mjs';
import { installInto, pack, remove } from '../js/pack.js';
import * as ref from '../js/reference.js';
import { startBrowser } from './support.js';

const TOKENS = ['ship', 'it', 'offline', 'everywhere'];
const N = TOKENS.length, D_K = 3;
const Q = ref.uniform(N * D_K, 31, -2, 2), K = ref.uniform(N * D_K, 32, -2, 2), V = ref.uniform(N * D_K, 33);
const rows = (flat) => Array.from({ length: N }, (_, i) => Array.from(flat.subarray(i * D_K, (i + 1) * D_K)));
const DATA = JSON.stringify({ tokens: TOKENS, Q: rows(Q), K: rows(K), V: rows(V) });
const WANT = Array.from(ref.attention(Q, K, V, { dK: D_K }).weights);

const FIGURES = `
<attn-heatmap id="heatmap" src="#data"></attn-heatmap>
<attn-bars id="bars" src="#data" query="offline"></attn-bars>
<attn-pipeline id="pipeline" src="#data"></attn-pipeline>
<attn-heads id="heads" src="#data"></attn-heads>
<script type="application/json" id="data">${DATA}</script>`;

const page = (title, script) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<link rel="icon" href="data:,">
<script type="module" src="${script}"></script>
</head>
<body>${FIGURES}
</body>
</html>
`;

// The Vite project's own module: the elements (side-effect import) and the engine by name.
const VITE_MAIN = `
import 'attnlens/elements';
import { init } from 'attnlens';

const q = Float32Array.from(${JSON.stringify(Array.from(Q))});
const k = Float32Array.from(${JSON.stringify(Array.from(K))});
const v = Float32Array.from(${JSON.stringify(Array.from(V))});
init().then(
  (lens) => { window.__engine = { simd: lens.simd, arch: lens.arch, weights: Array.from(lens.attention(q, k, v, { dK: ${D_K} }).weights) }; },
  (error) => { window.__engine = { error: String(error) }; });
`;

// A page script that tries to evaluate strings (see assertCspEnforced).
const CSP_PROBE = `window.__probe = [];
try { eval('1'); window.__probe.push('eval ran'); } catch (e) { window.__probe.push(e.name); }
try { new Function('return 1')(); window.__probe.push('new Function ran'); } catch (e) { window.__probe.push(e.name); }
`;

// Records CSP violations before any page script runs.
const WATCH_CSP = () => {
  window.__violations = [];
  document.addEventListener('securitypolicyviolation',
    (e) => window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
};

describe('the installed tarball in the browser, under a strict CSP', () => {
  let packed, project, site, browser;

  before(async () => {
    packed = await pack();
    project = await installInto(packed.tarball, { 'index.html': page('attnlens with Vite', './main.js'), 'main.js': VITE_MAIN });
    site = await mkdtemp(path.join(tmpdir(), 'attnlens-site-'));

    // Vite 7 builds the project (the package resolved from its node_modules, as for any user).
    const { build } = await import('vite');
    await build({
      root: project.dir, base: './', configFile: false, logLevel: 'error',
      build: { outDir: path.join(site, 'vite'), emptyOutDir: true, reportCompressedSize: false },
    });

    // Static: the package's files next to a plain HTML file; no build step.
    await cp(project.pkg, path.join(site, 'static', 'attnlens'), { recursive: true });
    await writeFile(path.join(site, 'static', 'index.html'), page('attnlens, static', 'attnlens/web/elements/index.js'));

    // Single file: one .js next to the page, nothing else.
    await mkdir(path.join(site, 'single'));
    await cp(path.join(project.pkg, 'web/dist/attnlens-single.js'), path.join(site, 'single', 'attnlens-single.js'));
    await writeFile(path.join(site, 'single', 'index.html'), page('attnlens, one file', 'attnlens-single.js'));

    // Lean: the package next to a page with one heatmap from the minified build.
    await cp(project.pkg, path.join(site, 'lean', 'attnlens'), { recursive: true });
    await writeFile(path.join(site, 'lean', 'index.html'), page('attnlens, one heatmap', 'attnlens/web/dist/elements/attn-heatmap.js')
      .replace(FIGURES, `\n<attn-heatmap id="heatmap" src="#data"></attn-heatmap>\n<script type="application/json" id="data">${DATA}</script>`));

    await writeFile(path.join(site, 'csp-probe.js'), CSP_PROBE);
    browser = await startBrowser({ serveOptions: { root: site, index: '/static/' } });
    await browser.context.addInitScript(WATCH_CSP);
  });
  after(async () => {
    await browser?.close();
    await remove(site);
    await remove(project?.dir);
    await remove(packed?.dir);
  });

  /** Opens a page of the site; returns it with every request it made (paths) and the document's CSP. */
  async function open(pathname) {
    const p = await browser.newPage();
    const requests = [];
    p.on('request', (r) => requests.push(r.url()));
    const response = await p.goto(`${browser.url}${pathname}`);
    return { page: p, requests, csp: response.headers()['content-security-policy'] };
  }

  /** Every figure drawn without error; the heatmap's weights; the CSP violations so far. */
  function figures(p) {
    return p.evaluate(async () => {
      const tags = ['attn-heatmap', 'attn-bars', 'attn-pipeline', 'attn-heads'];
      // No clock here: the suite's timeout is the hang guard.
      await Promise.all(tags.map((t) => customElements.whenDefined(t)));
      const els = tags.map((t) => document.querySelector(t));
      const states = await Promise.all(els.map(async (el) => [el.localName, await el.updateComplete, el.error]));
      const heatmap = document.getElementById('heatmap');
      return {
        states, weights: Array.from(heatmap.weights ?? []), simd: heatmap.lens?.simd ?? null,
        bars: Array.from(document.getElementById('bars').row ?? []), violations: window.__violations.slice(),
      };
    });
  }

  /**
   * The CSP is really enforced on this page: a same-origin script (/csp-probe.js) that tries eval
   * and new Function gets EvalErrors, and the violations are reported. (Code run by the test
   * harness itself is exempt from the page's CSP, so the probe is a real script of the page.)
   */
  async function assertCspEnforced(p) {
    const r = await p.evaluate(() => new Promise((resolve, reject) => {
      const script = Object.assign(document.createElement('script'), { src: '/csp-probe.js' });
      script.onload = () => resolve(window.__probe);
      script.onerror = () => reject(new Error('csp-probe.js did not load'));
      document.head.append(script);
    }));
    assert.deepEqual(r, ['EvalError', 'EvalError'], 'the CSP forbids eval on this page');
    await p.waitForFunction(() => window.__violations.length >= 2);
  }

  function assertFigures(r, what) {
    assert.deepEqual(r.states.map(([, ok, error]) => [ok, error]), Array(4).fill([true, null]), `${what}: ${JSON.stringify(r.states)}`);
    assert.equal(r.weights.length, N * N, what);
    assert.ok(ref.maxAbsDiff(r.weights, WANT) < 1e-5, `${what}: heatmap weights match the float64 reference`);
    assert.equal(r.simd, true, `${what}: the SIMD engine runs`);
    assert.deepEqual(r.violations, [], `${what}: CSP violations`);
  }

  function assertOffline(p) {
    assert.deepEqual(p.problems, [], 'console errors, failed requests');
    assert.deepEqual(browser.offHost, [], 'requests that left 127.0.0.1');
  }

  it('a Vite 7 build of a project importing the engine and the elements works, wasm found', async () => {
    const assets = await readdir(path.join(site, 'vite', 'assets'));
    for (const build of ['relaxed', 'simd', 'scalar'])
      assert.ok(assets.some((f) => new RegExp(`^attnlens-${build}-.*\\.wasm$`).test(f)), `Vite emitted the ${build} engine's wasm: ${assets}`);
    const { page: p, requests, csp } = await open('/vite/');
    assert.equal(csp, STRICT_CSP);
    await p.waitForFunction(() => window.__engine);
    const engine = await p.evaluate(() => window.__engine);
    assert.equal(engine.error, undefined, engine.error);
    assert.equal(engine.arch, 'wasm_relaxed', 'Chromium runs the relaxed-SIMD build');
    assert.ok(ref.maxAbsDiff(engine.weights, WANT) < 1e-5, 'engine weights');
    assertFigures(await figures(p), 'vite');
    const wasm = requests.filter((u) => u.endsWith('.wasm')).map((u) => new URL(u).pathname);
    assert.equal(wasm.length, 1, `one wasm fetched: ${wasm}`);
    assert.match(wasm[0], /^\/vite\/assets\/attnlens-relaxed-.*\.wasm$/);
    assert.ok(!requests.some((u) => /model/.test(u)), 'the model add-on is not loaded');
    assertOffline(p);
    await assertCspEnforced(p);
  });

  it('a static page with the package files and one module script works with no build step', async () => {
    const { page: p, requests, csp } = await open('/static/');
    assert.equal(csp, STRICT_CSP);
    const r = await figures(p);
    assertFigures(r, 'static');
    assert.ok(ref.maxAbsDiff(r.bars, WANT.slice(2 * N, 3 * N)) < 1e-5, 'bars show the row of "offline"');
    assert.ok(requests.some((u) => u.endsWith('/static/attnlens/web/dist/attnlens-relaxed.wasm')), 'the wasm next to the module');
    assertOffline(p);
    await assertCspEnforced(p);
  });

  it('the single-file build works as the only file next to the page', async () => {
    const { page: p, requests, csp } = await open('/single/');
    assert.equal(csp, STRICT_CSP);
    assertFigures(await figures(p), 'single');
    assert.deepEqual(requests.map((u) => new URL(u).pathname), ['/single/', '/single/attnlens-single.js'], 'no other request');
    assertOffline(p);
    await assertCspEnforced(p);
  });

  it('a page with one heatmap from the minified build loads ≤ 100 KB gzipped in ≤ 8 requests', async (t) => {
    const p = await browser.newPage();
    const loaded = [];
    p.on('response', async (r) => {
      if (!/^https?:/.test(r.url())) return;
      loaded.push(r.body().then((body) => ({ path: new URL(r.url()).pathname, status: r.status(), gzipped: gzipSync(body, { level: 9 }).length })));
    });
    await p.goto(`${browser.url}/lean/`);
    const r = await p.evaluate(async () => {
      await customElements.whenDefined('attn-heatmap');
      const el = document.getElementById('heatmap');
      return { ok: await el.updateComplete, error: el.error, weights: Array.from(el.weights ?? []), build: el.lens?.build, violations: window.__violations.slice() };
    });
    assert.equal(r.error, null);
    assert.equal(r.ok, true);
    assert.ok(ref.maxAbsDiff(r.weights, WANT) < 1e-5, 'heatmap weights match the float64 reference');
    assert.equal(r.build, 'relaxed', 'Chromium runs the relaxed-SIMD build');
    assert.deepEqual(r.violations, [], 'CSP violations');
    await p.waitForLoadState('networkidle');
    const responses = await Promise.all(loaded);
    const bytes = responses.reduce((sum, x) => sum + x.gzipped, 0);
    const list = responses.map((x) => `${x.path} ${x.status} ${(x.gzipped / 1000).toFixed(1)} KB`).join('; ');
    t.diagnostic(`lean page: ${responses.length} requests, ${(bytes / 1000).toFixed(1)} KB gzipped: ${list}`);
    assert.ok(responses.every((x) => x.status === 200), list);
    assert.ok(responses.some((x) => x.path.endsWith('/web/dist/attnlens-relaxed.wasm')), `the wasm from web/dist/: ${list}`);
    assert.ok(!responses.some((x) => /\/web\/(elements|engine)\//.test(x.path)), `only minified modules: ${list}`);
    assert.ok(responses.length <= 8, `${responses.length} requests: ${list}`);
    assert.ok(bytes <= 100_000, `${(bytes / 1000).toFixed(1)} KB gzipped: ${list}`);
    assertOffline(p);
    await assertCspEnforced(p);
  });

  describe('malformed and hostile data (installed elements, strict CSP)', () => {
    let p;
    before(async () => {
      ({ page: p } = await open('/static/'));
      await figures(p);
      await p.evaluate(() => {
        window.__events = [];
        for (const el of document.querySelectorAll('attn-heatmap, attn-bars, attn-pipeline, attn-heads'))
          el.addEventListener('error', (e) => window.__events.push(`${el.localName}: ${e.detail.message}`));
      });
    });

    // What every figure shows for `data`: ok, the message (el.error) and the alert text.
    const show = (data) => p.evaluate(async (data) => {
      const out = [];
      for (const el of document.querySelectorAll('attn-heatmap, attn-bars, attn-pipeline, attn-heads')) {
        el.data = data;
        const ok = await el.updateComplete;
        const alert = el.shadowRoot.querySelector('[role="alert"]');
        out.push({ tag: el.localName, ok, error: el.error, alert: alert?.textContent ?? null, shown: alert ? alert.checkVisibility() : false });
      }
      return out;
    }, data);

    const readable = (message) => typeof message === 'string' && message.length > 10 &&
      !/\[object |undefined|NaN|TypeError:|at .*:\d+:\d+/.test(message);

    const bad = [
      ['wrong lengths', { tokens: ['a', 'b', 'c'], Q: [[1, 2], [3, 4]], K: [[1, 2], [3, 4], [5, 6]] }],
      ['ragged rows', { tokens: ['a', 'b'], Q: [[1, 2], [3]], K: [[1, 2], [3, 4]] }],
      ['non-numbers', { tokens: ['a', 'b'], Q: [['1', 'x'], [3, 4]], K: [[1, 2], [3, 4]] }],
      ['NaN-like values', { tokens: ['a', 'b'], Q: [[null, 2], [3, 4]], K: [[1, 2], [3, {}]] }],
      ['weights outside [0, 1]', { tokens: ['a', 'b'], attention: [[0.5, 0.5], [7, -6]] }],
      ['a precomputed table of the wrong size', { tokens: ['a', 'b', 'c'], attention: [[1, 0], [0, 1]] }],
      ['not an object', 'tokens Q K'],
    ];
    for (const [what, data] of bad)
      it(`shows a readable error state for ${what}`, async () => {
        for (const r of await show(data)) {
          assert.equal(r.ok, false, `${r.tag}: ${what} was accepted`);
          assert.ok(readable(r.error), `${r.tag}: unreadable message ${JSON.stringify(r.error)}`);
          assert.equal(r.alert?.trim().includes(r.error.trim().slice(0, 20)), true, `${r.tag}: the message is shown (${r.alert})`);
          assert.equal(r.shown, true, `${r.tag}: the alert is visible`);
        }
        assert.ok((await p.evaluate(() => window.__events.splice(0))).length >= 4, 'error events');
      });

    it('10 000 tokens: every figure refuses them with a readable message naming the count', async () => {
      const tokens = Array.from({ length: 10_000 }, (_, i) => `w${i}`);
      const results = await show({ tokens, Q: tokens.map(() => [1]), K: tokens.map(() => [1]) });
      assert.deepEqual(results.map((r) => r.tag), ['attn-heatmap', 'attn-bars', 'attn-pipeline', 'attn-heads']);
      for (const r of results) {
        assert.equal(r.ok, false, `${r.tag} accepted 10 000 tokens`);
        assert.match(r.error, /10000 tokens is more than this figure can show/, r.tag);
        assert.ok(readable(r.error) && r.shown, `${r.tag}: ${JSON.stringify(r)}`);
      }
      assert.equal((await p.evaluate(() => window.__events.splice(0))).length, 4, 'one error event per figure');
    });

    it('shows HTML in tokens as text and executes nothing from data (attributes and JSON)', async () => {
      const evil = ['<img src=x onerror="window.__pwned=1">', '<script>window.__pwned=2<\/script>', '"><svg onload="window.__pwned=3">', 'javascript:window.__pwned=4'];
      const d = { tokens: evil, Q: evil.map((_, i) => [i, 1]), K: evil.map((_, i) => [1, i]) };
      const viaData = await show(d);
      assert.ok(viaData.every((r) => r.ok), JSON.stringify(viaData));
      // The same through attributes, as an author would write them in HTML.
      const viaAttributes = await p.evaluate(async ([tokens, q]) => {
        const el = document.createElement('attn-heatmap');
        el.setAttribute('tokens', JSON.stringify(tokens));
        el.setAttribute('q', JSON.stringify(q));
        el.setAttribute('k', JSON.stringify(q));
        document.body.append(el);
        const ok = await el.updateComplete;
        el.query = 0;
        await el.updateComplete;
        return { ok, error: el.error, tokens: el.tokens };
      }, [evil, d.Q]);
      assert.equal(viaAttributes.ok, true, viaAttributes.error);
      assert.deepEqual(viaAttributes.tokens, evil);
      await new Promise((resolve) => setTimeout(resolve, 300));  // give any injected handler a chance
      const found = await p.evaluate(() => {
        const deep = (root) => [...root.querySelectorAll('*')].flatMap((e) => [e, ...(e.shadowRoot ? deep(e.shadowRoot) : [])]);
        const nodes = deep(document);
        return {
          pwned: window.__pwned ?? null,
          injected: nodes.filter((e) => ['img', 'script', 'iframe', 'object', 'embed'].includes(e.localName) && !e.matches('head script, script[type="application/json"]')).length,
          handlers: nodes.filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length,
          text: [...document.querySelectorAll('attn-heatmap, attn-bars, attn-pipeline, attn-heads')].map((el) => el.shadowRoot.textContent).join(' '),
          violations: window.__violations.slice(),
        };
      });
      assert.equal(found.pwned, null, 'nothing ran');
      assert.equal(found.injected, 0, 'no element made from data');
      assert.equal(found.handlers, 0, 'no inline event handler anywhere');
      assert.ok(found.text.includes(evil[0]), 'the token is shown as text');
      assert.deepEqual(found.violations, [], 'nothing was blocked by the CSP either: nothing tried');
      assertOffline(p);
    });
  });
});
