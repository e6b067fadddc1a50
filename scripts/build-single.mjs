// Build step: bundles the engine API, every figure and the SIMD engine's wasm (inlined as base64)
// into one ES module, web/dist/attnlens-single.js (package entry `attnlens/single`), for authors
// who can host only one file. Uses Vite (a dev dependency) as a library bundler. Skips the work
// when the output is newer than every input.
//   node scripts/build-single.mjs
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const here = path.join(root, 'scripts/single');
const dist = path.join(root, 'web/dist');
const out = path.join(dist, 'attnlens-single.js');
const glue = path.join(dist, 'attnlens-simd.mjs');
const wasm = path.join(dist, 'attnlens-simd.wasm');

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p === dist ? [] : sources(p);
    return p.endsWith('.js') ? [p] : [];
  });
}
const inputs = [...sources(path.join(root, 'web')), glue, wasm, ...sources(here), fileURLToPath(import.meta.url)];
const mtime = (f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? -1;
if (mtime(out) > Math.max(...inputs.map(mtime))) process.exit(0);

const VIRTUAL_WASM = 'virtual:attnlens-simd-wasm-base64';
const NO_MODEL = '\0attnlens-no-model';

/** Swaps the engine loader and the model add-on for single-file stand-ins; inlines the wasm. */
const singleFile = {
  name: 'attnlens-single-file',
  enforce: 'pre',
  async resolveId(source, importer) {
    if (source === VIRTUAL_WASM) return `\0${VIRTUAL_WASM}`;
    if (!importer || importer.startsWith('\0')) return null;
    const resolved = path.resolve(path.dirname(importer), source);
    if (resolved === path.join(root, 'web/engine/load.js')) return path.join(here, 'load-single.js');
    if (resolved === path.join(root, 'web/model/index.js')) return NO_MODEL;
    if (resolved === path.join(root, 'web/engine/threaded.js')) return path.join(here, 'threaded-single.js');
    if (resolved === path.join(root, 'web/elements/lib/bundle.js')) return path.join(here, 'bundle-single.js');
    return null;
  },
  load(id) {
    if (id === `\0${VIRTUAL_WASM}`)
      return `export default ${JSON.stringify(readFileSync(wasm).toString('base64'))};`;
    if (id === NO_MODEL)
      return 'export function loadModel() { return Promise.reject(new Error(' +
        '"the model add-on is not part of the single-file build of attnlens: use the package entry attnlens/model")); }';
    return null;
  },
  transform(code, id) {
    // The glue's own wasm URL would make the bundler inline the wasm a second time; the bytes are
    // handed to it as wasmBinary instead, so the URL is never used.
    if (id !== glue) return null;
    const pattern = 'new URL("attnlens-simd.wasm",import.meta.url).toString()';
    if (code.split(pattern).length !== 2)
      throw new Error(`build-single: expected the Emscripten glue to contain ${pattern} once`);
    return { code: code.replace(pattern, '"attnlens-simd.wasm"'), map: null };
  },
};

const { build } = await import('vite');
await build({
  configFile: false,
  logLevel: 'warn',
  root,
  plugins: [singleFile],
  build: {
    outDir: dist,
    emptyOutDir: false,
    target: 'es2022',
    minify: 'esbuild',
    reportCompressedSize: false,
    lib: { entry: path.join(here, 'entry.js'), formats: ['es'], fileName: () => 'attnlens-single.js' },
    rollupOptions: { output: { inlineDynamicImports: true } },
  },
});
const text = readFileSync(out, 'utf8');
// One file means no dynamic import and no asset URL relative to the module.
if (/\bimport\s*\(|new URL\([^)]*import\.meta\.url/.test(text)) {
  console.error('[build-single] the bundle still loads another file (import() or new URL(…, import.meta.url))');
  process.exit(1);
}
console.error(`[build-single] ${path.relative(root, out)}: ${(text.length / 1024).toFixed(0)} KB`);
