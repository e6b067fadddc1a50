// `attnlens run MODEL "text" -o run.json [--generate N]`: the figures' JSON of a language model
// (a Hugging Face folder written by tests/js/hf-checkpoints.js, and stories260K), which
// `attnlens render` then draws.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

import { init } from 'attnlens';
import { gpt2Checkpoint, writeModelFolder } from './hf-checkpoints.js';

const CLI = fileURLToPath(new URL('../../web/cli/attnlens.js', import.meta.url));
const cli = (...args) => new Promise((resolve) => {
  execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 },
    (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
});
const folder = writeModelFolder(gpt2Checkpoint({ seed: 51 }), { tokenizer: 'gpt2', dtype: 'F16' });
after(() => rmSync(folder, { recursive: true, force: true }));

describe('attnlens run', () => {
  it('writes tokens and every layer and head of attention, equal to lm.run(), with --generate steps', async () => {
    const out = path.join(folder, 'run.json');
    const { code, stderr } = await cli('run', folder, 'The cat sat on the mat', '-o', out, '--generate', '3');
    assert.equal(code, 0, stderr);
    const json = JSON.parse(readFileSync(out, 'utf8'));
    const lm = await (await init()).loadModel(folder);
    const r = lm.run('The cat sat on the mat');
    assert.deepEqual(json.tokens, r.tokens);
    assert.equal(json.causal, true);
    assert.equal(json.attention.length, 2);
    const n = r.ids.length;
    for (let l = 0; l < 2; l++)
      for (let h = 0; h < 4; h++)
        for (let i = 0; i < n; i++)
          for (let j = 0; j < n; j++) assert.ok(Math.abs(json.attention[l][h][i][j] - r.layers[l].attention[(h * n + i) * n + j]) <= 1e-6);
    assert.equal(json.generation.steps.length, 3);
    assert.equal(json.generation.steps[0].attention[0][0].length, n);
    const svg = await cli('render', out, '--figure', 'heatmap', '--layer', '1', '--head', '2');
    assert.equal(svg.code, 0, svg.stderr);
    assert.match(svg.stdout, /<svg[^>]*role="img"/);
    assert.match(svg.stdout, / cat</);
  });

  it('refuses a missing text, a bad --generate and a folder that is not a model, with exit codes 2 and 1', async () => {
    assert.equal((await cli('run', folder)).code, 2);
    assert.equal((await cli('run', folder, 'x', '--generate', 'many')).code, 2);
    const bad = await cli('run', path.join(folder, 'nothing-here'), 'x');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /nothing-here/);
  });
});
