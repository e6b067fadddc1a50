// Build step: bundles the engine API, every figure and the SIMD engine's wasm into one minified ES
// module, web/dist/attnlens-single.js (package entry `attnlens/single`), with a source map, for
// authors who can host only one file. The wasm is inlined gzip-compressed by zopfli (Debian's
// `zopfli`, scripts/setup.sh; ~1.8 KB smaller than zlib's level 9), as base64, and inflated at
// load with DecompressionStream (every browser that runs SIMD128 has it; so does Node): ~30 KB
// of the file gzipped instead of ~44 KB for the plain wasm's base64. Bundled by Rollup, minified
// by esbuild (scripts/build-common.mjs). Skips the work when up to date.
//   node scripts/build-single.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { dist, minify, minifyStyles, relocate, root, sources, upToDate, web } from './build-common.mjs';

const here = path.join(root, 'scripts/single');
const out = path.join(dist, 'attnlens-single.js');
const glue = path.join(dist, 'attnlens-simd.mjs');
const wasm = path.join(dist, 'attnlens-simd.wasm');

const inputs = [...sources(web), glue, wasm, ...sources(here), path.join(root, 'scripts/build-common.mjs'), fileURLToPath(import.meta.url)];
if (upToDate([out, `${out}.map`], inputs)) process.exit(0);

/** The wasm gzip-compressed by zopfli (a clear error when it is not installed). */
function zopfliGzip(file) {
  try {
    return execFileSync('zopfli', ['--gzip', '-c', file], { maxBuffer: 1 << 26 });
  } catch (error) {
    if (error.code === 'ENOENT') throw new Error('build-single: zopfli is not installed (scripts/setup.sh installs it)');
    throw error;
  }
}

const VIRTUAL_WASM = '\0attnlens-simd-wasm-gzip-base64';
const NO_MODEL = '\0attnlens-no-model';

// The engine loader, the model add-on, threads and the bundle finder swapped for single-file
// stand-ins; the wasm inlined.
const STAND_INS = {
  [path.join(web, 'engine/load.js')]: path.join(here, 'load-single.js'),
  [path.join(web, 'model/index.js')]: NO_MODEL,
  [path.join(web, 'engine/threaded.js')]: path.join(here, 'threaded-single.js'),
  [path.join(web, 'elements/lib/bundle.js')]: path.join(here, 'bundle-single.js'),
};
const singleFile = relocate(null, {
  replace: (file) => STAND_INS[file] ?? null,
  load(id) {
    if (id === VIRTUAL_WASM)
      return `export default ${JSON.stringify(zopfliGzip(wasm).toString('base64'))};`;
    if (id === NO_MODEL)
      return 'export function loadModel() { return Promise.reject(new Error(' +
        '"the model add-on is not part of the single-file build of attnlens: use the package entry attnlens/model")); }';
    return null;
  },
});
const resolveVirtual = { name: 'attnlens-single-virtual', resolveId: (id) => (id === 'virtual:attnlens-simd-wasm' ? VIRTUAL_WASM : null) };
// The glue's own wasm URL would make a bundler inline the wasm a second time; the bytes are
// handed to it as wasmBinary instead, so the URL is never used. The glue also publishes the
// address of every `[[gnu::used]]` data symbol as `var X=Module["X"]=address`: those of
// cpp/src/kernels/blocked.hpp's address_taken markers (there only to keep binaryen from inlining
// the microkernels) are 38 mangled names, ~9 KB of text that no JavaScript reads.
const KEEP_OUT_OF_LINE = /var (__ZN8attnlens7kernels13address_taken\w+)=Module\["\1"\]=\d+;/g;
const glueWithoutUrl = {
  name: 'attnlens-single-glue',
  transform(code, id) {
    if (id !== glue) return null;
    const pattern = 'new URL("attnlens-simd.wasm",import.meta.url).toString()';
    if (code.split(pattern).length !== 2)
      throw new Error(`build-single: expected the Emscripten glue to contain ${pattern} once`);
    const out = code.replace(pattern, '"attnlens-simd.wasm"').replace(KEEP_OUT_OF_LINE, '');
    if (out.includes('address_taken'))
      throw new Error('build-single: an address_taken symbol of the glue is still referenced');
    return { code: out, map: null };
  },
};

const { rollup } = await import('rollup');
const bundle = await rollup({
  input: path.join(here, 'entry.js'),
  plugins: [resolveVirtual, singleFile, glueWithoutUrl, minifyStyles()],
  onwarn(warning, warn) {
    if (warning.code !== 'CIRCULAR_DEPENDENCY') warn(warning);
  },
});
await bundle.write({
  file: out, format: 'es', inlineDynamicImports: true, sourcemap: true, sourcemapExcludeSources: true,
  plugins: [await minify()],
});
await bundle.close();

const text = readFileSync(out, 'utf8');
// One file means no dynamic import and no asset URL relative to the module.
if (/\bimport\s*\(|new URL\([^)]*import\.meta\.url/.test(text)) {
  console.error('[build-single] the bundle still loads another file (import() or new URL(…, import.meta.url))');
  rmSync(out);  // never leave a file that would load others
  process.exit(1);
}
console.error(`[build-single] ${path.relative(root, out)}: ${(text.length / 1024).toFixed(0)} KB, ${(gzipSync(text, { level: 9 }).length / 1000).toFixed(1)} KB gzipped`);
