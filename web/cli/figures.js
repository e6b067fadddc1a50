// The figures the command line can render, found rather than listed: every module in
// web/elements/svg/ that exports `<name>SVG(result, theme, state, options)` and has an element
// web/elements/attn-<name>.js (whose class gives the data limits, defaults and compute step).
// A new figure plugs in by adding those two files.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { AttnElement } from '../elements/lib/base.js';

const SVG_DIR = new URL('../elements/svg/', import.meta.url);
const ELEMENTS = new URL('../elements/', import.meta.url);

let found = null;

/** { name → { name, tag, svg, element } }, loaded once. */
export async function figures() {
  found ??= (async () => {
    const out = {};
    const files = readdirSync(fileURLToPath(SVG_DIR)).filter((f) => /^[a-z][a-z0-9-]*\.js$/.test(f)).sort();
    for (const file of files) {
      const name = file.slice(0, -3);
      const svg = (await import(new URL(file, SVG_DIR).href))[`${name.replace(/-([a-z])/g, (_, c) => c.toUpperCase())}SVG`];
      if (typeof svg !== 'function') continue;  // a helper module (e.g. matrix-image.js)
      const tag = `attn-${name}`;
      let module;
      try {
        module = await import(new URL(`${tag}.js`, ELEMENTS).href);
      } catch (error) {
        if (error?.code === 'ERR_MODULE_NOT_FOUND') continue;
        throw error;
      }
      const element = Object.values(module).find((v) => typeof v === 'function' && v.prototype instanceof AttnElement);
      if (element) out[name] = { name, tag, svg, element };
    }
    return out;
  })();
  return found;
}
