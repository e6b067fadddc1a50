// What the minified builds share (scripts/build-elements.mjs, scripts/build-single.mjs): the
// project's paths, the "is the output newer than every input" check, and two Rollup plugins:
// `relocate` keeps the files a module reaches by URL (the Emscripten glue, .wasm, workers, model
// files) where they are, rewriting each relative URL for the folder the bundle is written to,
// `minify` runs esbuild's minifier over every chunk (source maps chained), and `minifyStyles`
// squeezes the whitespace out of the elements' CSS, which lives in template literals that a
// JavaScript minifier leaves alone.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const web = path.join(root, 'web');
export const dist = path.join(web, 'dist');

/** Every .js file under `dir`, web/dist/ (build output) excluded. */
export function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p === dist ? [] : sources(p);
    return p.endsWith('.js') ? [p] : [];
  });
}

const mtime = (f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? -1;

/** True when every output exists and is newer than every input (the build can be skipped). */
export const upToDate = (outputs, inputs) => Math.min(...outputs.map(mtime)) > Math.max(...inputs.map(mtime));

const posix = (p) => p.split(path.sep).join('/');
const relativeUrl = (from, to) => {
  const rel = posix(path.relative(from, to));
  return rel.startsWith('.') ? rel : `./${rel}`;
};
const inSources = (file) => file.startsWith(web + path.sep) && !file.startsWith(dist + path.sep);

/**
 * For bundles written flat into `outdir` (every entry and chunk in that one folder, so one
 * relative URL is right for all of them). In the project's web/ sources,
 * `new URL('<relative>', import.meta.url)` is rewritten to point from `outdir` at the same file,
 * and `import('<relative>.mjs')` of the Emscripten glue in web/dist/ stays an import (external)
 * of that file. `replace(file) → id | null` swaps a module for another (the single-file build's
 * stand-ins); `load(id) → code | null` provides virtual ones.
 */
export function relocate(outdir, { replace = () => null, load = () => null } = {}) {
  return {
    name: 'attnlens-relocate',
    resolveId(source, importer) {
      if (source.startsWith('node:')) return { id: source, external: true };
      if (!importer || !/^\.\.?\//.test(source) || importer.startsWith('\0')) return null;
      const resolved = path.resolve(path.dirname(importer), source);
      const swapped = replace(resolved);
      if (swapped) return swapped;
      if (path.dirname(resolved) === dist && resolved.endsWith('.mjs') && outdir)
        return { id: relativeUrl(outdir, resolved), external: true };
      return null;
    },
    load,
    transform(code, id) {
      if (!outdir || !inSources(id)) return null;
      const out = code.replace(/new URL\((['"])(\.\.?\/[^'"]+)\1,\s*import\.meta\.url\)/g, (_, quote, rel) =>
        `new URL(${quote}${relativeUrl(outdir, path.resolve(path.dirname(id), rel))}${quote}, import.meta.url)`);
      return out === code ? null : { code: out, map: null };
    },
  };
}

/** esbuild's minifier over each chunk Rollup renders. */
export async function minify() {
  const { transform } = await import('esbuild');
  return {
    name: 'attnlens-minify',
    async renderChunk(code, chunk) {
      const out = await transform(code, {
        minify: true, format: 'esm', target: 'es2022', sourcemap: true, sourcefile: chunk.fileName, legalComments: 'none',
      });
      return { code: out.code, map: out.map };
    },
  };
}

// `const STYLE = \`…\``, `export const baseCSS = \`…\``, `export const themeCSS = \`…\``: the
// elements' style sheets (web/elements/attn-*.js, lib/styles.js, lib/theme.js).
const STYLE_LITERAL = /((?:const|let)\s+(?:STYLE|baseCSS|themeCSS)\s*=\s*)`([^`]*)`/g;

/**
 * CSS text with comments dropped, runs of whitespace collapsed, and none around { } ; , or after
 * a colon; interpolations and quoted strings are kept as they are.
 */
export function squeezeCSS(css) {
  return css.split(/(\$\{[^}]*\}|"[^"]*")/).map((part, i) => (i % 2 ? part : part
    .replace(/\/\*[^]*?\*\//g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/ ?([{};,]) ?/g, '$1')
    .replace(/: /g, ':'))).join('');
}

export function minifyStyles() {
  return {
    name: 'attnlens-minify-styles',
    transform(code, id) {
      if (!inSources(id) || !/^(attn-[a-z-]+|styles|theme)\.js$/.test(path.basename(id))) return null;
      const out = code.replace(STYLE_LITERAL, (_, head, css) => `${head}\`${squeezeCSS(css)}\``);
      return out === code ? null : { code: out, map: null };
    },
  };
}
