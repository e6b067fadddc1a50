// `attnlens run MODEL_FOLDER "text"`: the figures' JSON of a model folder (random-weight GPT-2
// and BERT folders in the Hub's layout, the real vocabularies). Its attention is m.run's, and
// through it the float64 reference's; --generate's steps are m.generate's; `attnlens render`
// draws the file; every bad argument exits non-zero with a message naming it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { init } from 'attnlens';

import { render } from '../../web/cli/render.js';
import { tokenLabel } from '../../web/elements/lib/tokens.js';
import { bertCheckpoint, gpt2Checkpoint, roundedTensors, writeModelFolder } from './hf-checkpoints.js';
import { maxAbsDiff, reference } from './transformer-reference.js';

const CLI = fileURLToPath(new URL('../../web/cli/attnlens.js', import.meta.url));
const TEXT = 'The cat sat on the mat because it was tired.';

function cli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 256 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
  });
}

// [layers][heads][n][n] → one flat Float32Array per layer, as m.run gives it.
const flatLayers = (attention) => attention.map((layer) => Float32Array.from(layer.flat(2)));

describe('attnlens run', () => {
  let dir, lens;
  const gpt2 = gpt2Checkpoint({ seed: 31 });
  const bert = bertCheckpoint({ seed: 32 });
  let gpt2Dir, bertDir;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'attnlens-run-'));
    gpt2Dir = writeModelFolder(gpt2, { dtype: 'F16', tokenizer: 'gpt2', dir: await mkdtemp(path.join(dir, 'gpt2-')) });
    bertDir = writeModelFolder(bert, { tokenizer: 'bert', dir: await mkdtemp(path.join(dir, 'bert-')) });
    lens = await init();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('writes every layer\'s and head\'s attention of a GPT-2 folder, as m.run and the float64 reference give it, and render draws it', async () => {
    const out = path.join(dir, 'run.json');
    const r = await cli(['run', gpt2Dir, TEXT, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    const data = JSON.parse(await readFile(out, 'utf8'));
    const lm = await lens.loadModel(gpt2Dir);
    const run = lm.run(TEXT);
    assert.deepEqual(data.tokens, run.tokens.map(tokenLabel));
    assert.deepEqual(data.pieces, run.tokens);
    assert.deepEqual(data.ids, Array.from(run.ids));
    assert.equal(data.causal, true);
    assert.deepEqual({ ...data.about, folder: undefined }, { folder: undefined, architecture: 'GPT2LMHeadModel', modelType: 'gpt2', kind: 'causal-lm',
      layers: 2, heads: 4, vocabSize: 50257, context: 64, text: TEXT });
    const n = run.tokens.length;
    assert.equal(data.attention.length, 2);
    for (const layer of data.attention) {
      assert.equal(layer.length, 4);
      for (const head of layer) assert.deepEqual([head.length, head[0].length], [n, n]);
    }
    // float32 numbers survive JSON exactly.
    flatLayers(data.attention).forEach((w, l) => assert.deepEqual(w, run.layers[l].attention, `layer ${l}`));
    const want = reference(gpt2.config, roundedTensors(gpt2, 'F16'), run.ids);
    flatLayers(data.attention).forEach((w, l) => assert.ok(maxAbsDiff(w, want.attention[l]) <= 1e-4, `layer ${l} against float64`));
    // render draws the file: the heatmap of layer 2, head 3 holds those weights, causal.
    const drawn = await cli(['render', out, '--layer', '1', '--head', '2']);
    assert.equal(drawn.code, 0, drawn.stderr);
    assert.equal(drawn.stdout, await render(data, { layer: 1, head: 2 }));
    const cells = [...drawn.stdout.matchAll(/data-weight="([\d.e-]+)"/g)].map((m) => Number(m[1]));
    const head = run.layers[1].attention.subarray(2 * n * n, 3 * n * n);
    assert.ok(cells.length > 0 && cells.length <= n * n, `${cells.length} cells`);
    const unmasked = Array.from(head).filter((_, k) => k % n <= Math.floor(k / n));
    assert.equal(cells.length, unmasked.length, 'one cell per unmasked weight');
    // data-weight carries two decimals.
    cells.forEach((c, k) => assert.ok(Math.abs(c - unmasked[k]) <= 0.005 + 1e-9, `cell ${k}: ${c} vs ${unmasked[k]}`));
    for (const [figure, query] of [['heads', '-1'], ['lines', '-1'], ['bars', 'it']]) {
      const svg = await cli(['render', out, '--figure', figure, '--query', query]);
      assert.equal(svg.code, 0, `${figure}: ${svg.stderr}`);
      assert.ok(svg.stdout.trimEnd().endsWith('</svg>'), figure);
    }
  });

  it('--generate N adds the steps m.generate writes: tokens, each step\'s attention rows and candidates', async () => {
    const r = await cli(['run', gpt2Dir, TEXT, '--generate', '5']);
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(r.stdout);
    const lm = await lens.loadModel(gpt2Dir);
    const g = lm.generate(TEXT, { steps: 5, temperature: 0, seed: 1 });
    assert.equal(data.generation.text, g.text);
    assert.deepEqual(data.generation.ids, Array.from(g.ids));
    assert.equal(data.generation.steps.length, g.steps.length);
    const heads = lm.config.heads;
    data.generation.steps.forEach((step, s) => {
      const want = g.steps[s];
      assert.deepEqual([step.id, step.token, step.position], [want.id, want.token, want.position]);
      assert.equal(step.attention.length, lm.config.layers);
      step.attention.forEach((layer, l) => {
        assert.equal(layer.length, heads);
        assert.deepEqual(Float32Array.from(layer.flat()), want.attention[l], `step ${s} layer ${l}`);
        for (const row of layer) assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-5, 'a row sums to 1');
      });
      assert.deepEqual(step.candidates, want.candidates.map(({ id, token, p }) => ({ id, token, p })));
    });
    // The file with its generation still renders (render reads tokens and attention).
    const file = path.join(dir, 'gen.json');
    await writeFile(file, r.stdout);
    assert.equal((await cli(['render', file, '--figure', 'heads'])).code, 0);
  });

  it('a BERT folder: bidirectional attention as m.run gives it, [CLS] and [SEP] included', async () => {
    const r = await cli(['run', bertDir, 'Paris is the [MASK] of France.']);
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(r.stdout);
    const run = (await lens.loadModel(bertDir)).run('Paris is the [MASK] of France.');
    assert.equal(data.causal, false);
    assert.equal(data.about.kind, 'masked-lm');
    assert.deepEqual([data.tokens[0], data.tokens.at(-1)], ['[CLS]', '[SEP]']);
    flatLayers(data.attention).forEach((w, l) => assert.deepEqual(w, run.layers[l].attention, `layer ${l}`));
    const want = reference(bert.config, roundedTensors(bert), run.ids);
    flatLayers(data.attention).forEach((w, l) => assert.ok(maxAbsDiff(w, want.attention[l]) <= 1e-4, `layer ${l} against float64`));
  });

  it('exits non-zero with a message that names the argument', async () => {
    const file = path.join(dir, 'not-a-folder.txt');
    await writeFile(file, 'hello');
    const cases = [
      [['run'], 2, /run needs MODEL_FOLDER and TEXT/],
      [['run', gpt2Dir], 2, /run needs MODEL_FOLDER and TEXT/],
      [['run', gpt2Dir, 'a', 'b'], 2, /run takes MODEL_FOLDER and one TEXT \(got 3 arguments: quote the text\)/],
      [['run', path.join(dir, 'missing'), TEXT], 1, /MODEL_FOLDER .*missing: no such folder/],
      [['run', file, TEXT], 1, /MODEL_FOLDER .*not-a-folder\.txt is a file, not a folder/],
      [['run', dir, TEXT], 1, /MODEL_FOLDER .* has no config\.json/],
      [['run', gpt2Dir, ''], 1, /TEXT is missing or empty/],
      [['run', gpt2Dir, TEXT, '--generate', 'many'], 2, /--generate must be a whole number \(got "many"\)/],
      [['run', gpt2Dir, TEXT, '--generate', '0'], 1, /--generate must be a whole number of tokens ≥ 1 \(got 0\)/],
      [['run', gpt2Dir, TEXT, '--temperature', 'hot'], 2, /--temperature must be a number ≥ 0 \(got "hot"\)/],
      [['run', bertDir, TEXT, '--generate', '3'], 1, /--generate: .* holds a masked-lm \(BertForMaskedLM\); only causal LMs/],
      [['run', gpt2Dir, 'word '.repeat(100)], 1, /TEXT: .*context/],
      [['run', gpt2Dir, TEXT, '--colour', 'red'], 2, /Unknown option '--colour'/],
      [['run', gpt2Dir, TEXT, '-o', path.join(dir, 'no/such/run.json')], 1, /cannot write .*run\.json: its folder does not exist/],
    ];
    for (const [args, code, message] of cases) {
      const r = await cli(args);
      assert.equal(r.code, code, `${args.join(' ').slice(0, 80)}: exit code (stderr: ${r.stderr})`);
      assert.match(r.stderr, message, args.join(' ').slice(0, 80));
      assert.match(r.stderr, /^attnlens: /);
      assert.equal(r.stdout, '');
    }
    // A folder whose config.json names an architecture not supported: the loader's ModelFormatError, with the folder.
    const bad = await mkdtemp(path.join(dir, 't5-'));
    writeModelFolder({ config: { ...gpt2.config, model_type: 't5', architectures: ['T5Model'] }, tensors: gpt2.tensors.slice(0, 2) }, { tokenizer: 'gpt2', dir: bad });
    const r = await cli(['run', bad, TEXT]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^attnlens: MODEL_FOLDER .*t5-\S*: .*model_type "t5" is not supported; supported: gpt2, bert/m);
  });

  it('stories260K, the bundled model, is named instead of a folder', async () => {
    const r = await cli(['run', 'stories260K', 'Once upon a time', '--generate', '4']);
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(r.stdout);
    const lm = await lens.loadModel('stories260K');
    const run = lm.run('Once upon a time');
    assert.equal(data.about.folder, 'stories260K');
    assert.equal(data.tokens[0], '<s>');
    flatLayers(data.attention).forEach((w, l) => assert.deepEqual(w, run.layers[l].attention, `layer ${l}`));
    assert.equal(data.generation.text, lm.generate('Once upon a time', { steps: 4, temperature: 0, seed: 1 }).text);
  });

  it('help documents run and its options', async () => {
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /attnlens run MODEL_FOLDER TEXT/);
    for (const option of ['--generate N', '--temperature T', '--seed S']) assert.ok(help.stdout.includes(option), option);
  });
});
