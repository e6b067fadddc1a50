// Server-side rendering with Svelte 5 (beside ssr.test.js's React and Vue): in Node, with no DOM,
// the test app (tests/frameworks/svelte/App.svelte) compiled for the server renders next to
// `import 'attnlens/elements'` without crashing, writes the figures' tags with the state the app
// gives them, and escapes tokens given as attributes.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import { compile } from 'svelte/compiler';
import { render } from 'svelte/server';

const APP = new URL('../frameworks/svelte/App.svelte', import.meta.url);

describe('server-side rendering with Svelte 5 (Node, no DOM)', () => {
  let dir;
  before(async () => { dir = await mkdtemp(path.join(tmpdir(), 'attnlens-svelte-ssr-')); });
  after(() => rm(dir, { recursive: true, force: true }));

  /** Compiles a component for the server into `dir` (imports made absolute) and imports it. */
  async function serverComponent(source, name, from) {
    const { js } = compile(source, { generate: 'server', filename: `${name}.svelte` });
    const code = js.code.replace(/from '([^']+)'/g, (_, spec) =>
      `from '${spec.startsWith('.') ? new URL(spec, from).href : import.meta.resolve(spec)}'`);
    const file = path.join(dir, `${name}.mjs`);
    await writeFile(file, code);
    return (await import(pathToFileURL(file).href)).default;
  }

  it('renders the test app next to the elements module: tags, state, and no DOM needed', async () => {
    assert.equal(globalThis.document, undefined);
    assert.equal(globalThis.customElements, undefined);
    const elements = await import('attnlens/elements');
    assert.equal(typeof elements.AttnHeatmap, 'function');
    const App = await serverComponent(await readFile(APP, 'utf8'), 'App', APP);
    const { body } = render(App);
    assert.match(body, /<attn-heatmap id="map"[^>]* query="1"[^>]*><\/attn-heatmap>/);
    assert.match(body, /<attn-bars id="bars"[^>]* query="1"[^>]*><\/attn-bars>/);
    assert.match(body, /<output id="seen">none<\/output>/);
  });

  it('escapes tokens and text given as attributes', async () => {
    const source = `<script>let { tokens, text } = $props();</script>
<attn-bars {tokens} query={0}></attn-bars><attn-heads model="use-lite" {text}></attn-heads>`;
    const Figure = await serverComponent(source, 'Figure', APP);
    const { body } = render(Figure, { props: { tokens: 'x "y" <script>alert(1)</script> &', text: "it's <b>bold</b> & \"quoted\"" } });
    assert.ok(!/<script|<b>/.test(body), body);
    assert.match(body, /<attn-bars tokens="x &quot;y&quot; &lt;script>alert\(1\)&lt;\/script> &amp;" query="0"><\/attn-bars>/);
    assert.match(body, /<attn-heads model="use-lite" text="it's &lt;b>bold&lt;\/b> &amp; &quot;quoted&quot;"><\/attn-heads>/);
  });
});
