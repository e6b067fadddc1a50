// Server-side rendering: in Node, with no DOM, every public entry imports without throwing (and
// registers nothing, as there is no customElements), and React's and Vue's server renderers put
// the figures' tags in the HTML they write, attributes escaped, for the browser to upgrade.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const ENTRIES = Object.keys(manifest.exports).filter((k) => k !== './package.json').map((k) => `attnlens${k.slice(1)}`);

describe('server-side rendering (Node, no DOM)', () => {
  it('imports every public entry without a DOM', async () => {
    assert.equal(globalThis.document, undefined);
    assert.equal(globalThis.customElements, undefined);
    assert.ok(ENTRIES.length >= 8, ENTRIES.join(' '));
    for (const entry of ENTRIES) {
      const module = await import(entry);
      assert.ok(Object.keys(module).length > 0, `${entry} exports something`);
    }
    const { AttnHeatmap } = await import('attnlens/elements');
    assert.equal(typeof AttnHeatmap, 'function');
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
