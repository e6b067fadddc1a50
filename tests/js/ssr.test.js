// Server-side rendering: in Node, with no DOM, every public entry imports without throwing and
// registers nothing (docs/authoring.md): the entries look for a custom-element registry, find none,
// and leave no global behind; the same imports with a recording registry (a child process) define
// each figure's tag once, so the check sees registration where it happens. React's and Vue's server
// renderers put the figures' tags in the HTML they write, attributes escaped, for the browser to
// upgrade.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const ENTRIES = Object.keys(manifest.exports).filter((k) => k !== './package.json').map((k) => `attnlens${k.slice(1)}`);

const TAGS = ['attn-bars', 'attn-compare', 'attn-generate', 'attn-heads', 'attn-heatmap', 'attn-lines', 'attn-pipeline', 'attn-text'];
const DOM_GLOBALS = ['customElements', 'document', 'window', 'HTMLElement'];

describe('server-side rendering (Node, no DOM)', () => {
  it('imports every public entry without a DOM, and registers nothing', async () => {
    // Every DOM global reads as undefined, as in plain Node, but each read is recorded.
    const reads = new Set();
    for (const name of DOM_GLOBALS) {
      assert.equal(name in globalThis, false, `${name}: this process has no DOM`);
      Object.defineProperty(globalThis, name, { get: () => (reads.add(name), undefined), configurable: true });
    }
    const globalsBefore = new Set(Reflect.ownKeys(globalThis));
    try {
      assert.ok(ENTRIES.length >= 8, ENTRIES.join(' '));
      for (const entry of ENTRIES) {
        const module = await import(entry);
        assert.ok(Object.keys(module).length > 0, `${entry} exports something`);
      }
      const { AttnHeatmap } = await import('attnlens/elements');
      assert.equal(typeof AttnHeatmap, 'function');
      assert.ok(reads.has('customElements'), 'the elements looked for a registry');
      assert.deepEqual(Reflect.ownKeys(globalThis).filter((k) => !globalsBefore.has(k)), [], 'no global left behind');
      for (const name of DOM_GLOBALS) assert.equal(Object.getOwnPropertyDescriptor(globalThis, name).value, undefined, name);
    } finally {
      for (const name of DOM_GLOBALS) delete globalThis[name];
    }
  });

  it('with a registry, the same imports define each figure once (so the check above can fail)', async () => {
    const script = `
      const defined = [];
      globalThis.HTMLElement = class {};
      globalThis.customElements = { get: (n) => defined.find((d) => d[0] === n)?.[1], define: (n, c) => defined.push([n, c]) };
      for (const entry of ${JSON.stringify(ENTRIES)}) await import(entry);
      console.log(JSON.stringify(defined.map(([n, c]) => [n, typeof c])));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script],
      { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    const defined = JSON.parse(stdout);
    assert.deepEqual(defined.map(([n]) => n).sort(), TAGS);
    assert.ok(defined.every(([, type]) => type === 'function'));
  });

  it('React renderToString and Vue renderToString write the tags', async () => {
    await import('attnlens/elements');
    const { createElement } = await import('react');
    const { renderToString } = await import('react-dom/server');
    const react = renderToString(createElement('attn-heatmap', { tokens: 'a <b>', query: 1, theme: 'dark' }));
    assert.match(react, /^<attn-heatmap tokens="a &lt;b&gt;" query="1" theme="dark"><\/attn-heatmap>$/);
    const { createSSRApp, h } = await import('vue');
    const { renderToString: vueToString } = await import('vue/server-renderer');
    const vue = await vueToString(createSSRApp({ render: () => h('attn-bars', { tokens: 'x "y"', query: 0 }) }));
    assert.match(vue, /^<attn-bars tokens="x &quot;y&quot;" query="0"><\/attn-bars>$/);
  });
});
