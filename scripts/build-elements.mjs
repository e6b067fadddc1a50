// Build step: minified ES modules of the figures and the engine API for pages, with source maps,
// into web/dist/elements/ (package entries `attnlens/dist/elements`, `…/attn-<name>.js`,
// `…/attnlens.js`): one file per element entry, `index.js` (every element), `attnlens.js` (the
// engine: init(), Lens, …), and the chunks they share, so a page that uses several pays for the
// shared code once. The Emscripten glue and .wasm files stay in web/dist/ and are loaded from
// there; the model add-on is a chunk loaded only by lens.loadModel(). The source modules in
// web/ stay the package's default entries, for bundlers. Skips the work when up to date.
//   node scripts/build-elements.mjs
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { dist, minify, minifyStyles, relocate, root, sources, upToDate, web } from './build-common.mjs';

const outdir = path.join(dist, 'elements');
const elements = readdirSync(path.join(web, 'elements')).filter((f) => /^attn-[a-z-]+\.js$/.test(f)).sort();
const entryPoints = {
  index: path.join(web, 'elements/index.js'),
  attnlens: path.join(web, 'attnlens.js'),
  ...Object.fromEntries(elements.map((f) => [f.slice(0, -3), path.join(web, 'elements', f)])),
};
const outputs = Object.keys(entryPoints).map((name) => path.join(outdir, `${name}.js`));
const inputs = [...sources(web), path.join(root, 'scripts/build-common.mjs'), fileURLToPath(import.meta.url)];
if (upToDate(outputs, inputs)) process.exit(0);

// Which element entries reach each module through static imports; the chunks follow from it:
// the engine's modules in one chunk, modules two or more elements share in another, and what
// one element alone uses in that element's file. So a page with one figure loads its file, the
// shared chunk, the engine chunk, the glue and the .wasm, however many figures exist; modules
// reached only by import() (the model add-on, threads, standalone export) get chunks of their own.
const engineEntry = entryPoints.attnlens;
const elementEntries = elements.map((f) => path.join(web, 'elements', f));
function chunkOf(id, { getModuleInfo }) {
  if (id === engineEntry) return 'engine';  // else Rollup folds it into the shared chunk behind a facade
  if (Object.values(entryPoints).includes(id)) return undefined;
  const reaches = (entry, seen = new Set()) => {
    if (entry === id) return true;
    if (seen.has(entry)) return false;
    seen.add(entry);
    return (getModuleInfo(entry)?.importedIds ?? []).some((next) => reaches(next, seen));
  };
  if (reaches(engineEntry)) return 'engine';
  return elementEntries.filter((e) => reaches(e)).length >= 2 ? 'shared' : undefined;
}

const { rollup } = await import('rollup');
rmSync(outdir, { recursive: true, force: true });  // no chunk of an earlier build left behind
const bundle = await rollup({
  input: entryPoints,
  preserveEntrySignatures: 'strict',
  plugins: [relocate(outdir), minifyStyles()],
  onwarn(warning, warn) {
    if (warning.code !== 'CIRCULAR_DEPENDENCY') warn(warning);
  },
});
const { output } = await bundle.write({
  dir: outdir,
  format: 'es',
  entryFileNames: '[name].js',
  chunkFileNames: '[name]-[hash].js',
  manualChunks: chunkOf,
  sourcemap: true,
  sourcemapExcludeSources: true,  // the maps point at the sources, which the package ships
  plugins: [await minify()],
});
await bundle.close();
const chunks = output.filter((o) => o.type === 'chunk');
const bytes = chunks.reduce((sum, c) => sum + Buffer.byteLength(c.code), 0);
console.error(`[build-elements] ${path.relative(root, outdir)}/: ${chunks.length} modules, ${(bytes / 1024).toFixed(0)} KB`);
