// Build step: copies the ES module build of @huggingface/tokenizers (Hugging Face's tokenizer.json
// implementation, Apache-2.0, no dependencies; a devDependency) to web/dist/hf-tokenizers.mjs,
// with its licence, so that web/model/hf-tokenizer.js imports it by a relative URL in Node,
// bundlers and plain pages alike (a page cannot resolve a bare package name). Skips the work
// when the copy is up to date.
//   node scripts/vendor-tokenizers.mjs
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@huggingface/tokenizers';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'web/dist/hf-tokenizers.mjs');
const pinned = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies?.[PACKAGE];

let packageJson;  // the package exports no ./package.json: found from its main entry (dist/)
try {
  packageJson = path.join(path.dirname(createRequire(path.join(root, 'package.json')).resolve(PACKAGE)), '../package.json');
} catch {
  console.error(`vendor-tokenizers: ${PACKAGE} is not installed: run npm install (package.json pins ${pinned})`);
  process.exit(1);
}
const dir = path.dirname(packageJson);
const { version, license } = JSON.parse(readFileSync(packageJson, 'utf8'));
if (version !== pinned) {
  console.error(`vendor-tokenizers: ${PACKAGE} ${version} is installed but package.json pins ${pinned}: run npm install`);
  process.exit(1);
}
const source = path.join(dir, 'dist/tokenizers.min.mjs');
const mtime = (f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? -1;
if (mtime(out) > Math.max(mtime(source), mtime(fileURLToPath(import.meta.url)), mtime(packageJson))) process.exit(0);

const code = readFileSync(source, 'utf8');
// The copy must stand alone: no imports of its own (the package has no dependencies).
if (/(^|[;\s])import\s*[{*"'\w]|\bimport\s*\(|\brequire\s*\(/.test(code))
  throw new Error(`vendor-tokenizers: ${source} imports other modules; it cannot be copied as one file`);
const licence = readFileSync(path.join(dir, 'LICENSE'), 'utf8').replaceAll('*/', '* /');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `/*! ${PACKAGE} ${version} (${license}), copied unchanged from its dist/tokenizers.min.mjs ` +
  `by scripts/vendor-tokenizers.mjs.\n\n${licence}\n*/\n${code}`);
