// The benchmark (scripts/bench) at a tiny size: every contestant loads, runs and agrees with
// attnlens; in Node, and in headless Chromium with the frame test. Then the reporting pipeline:
// the benches' --json files (record.js) turned by report.mjs into the tables of
// docs/performance.md and the chart, with every number taken from the JSON. No timing is asserted.
import os from 'node:os';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { loadPeers } from '../../scripts/bench/bench.mjs';
import { browserSections, runInBrowser } from '../../scripts/bench/browser.mjs';
import * as core from '../../scripts/bench/core.js';
import { writeSections } from '../../scripts/bench/record.js';
import { chart, tables, updateBlocks } from '../../scripts/bench/report.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const fmt = (x, digits = 2) => (x >= 100 ? x.toFixed(0) : x.toFixed(digits));

/** The report of `sections`: each summary row of the attention table carries the JSON's numbers. */
function checkAttentionReport(sections, key) {
  const { tables: blocks } = tables([{ kind: 'attnlens-bench', sections }]);
  const md = blocks[key];
  assert.ok(md, `no ${key} table: ${Object.keys(blocks)}`);
  const s = sections.find((x) => x.section === 'attention');
  assert.ok(md.startsWith(`Printed by \`${s.command}\` on ${s.machine.cpu}, ${s.machine.cores} cores`), md.slice(0, 200));
  for (const x of core.summarize(s.records))
    assert.ok(md.includes(`| ${x.n} | ${x.ours.build} | ${fmt(x.ours.ms)} | ${fmt(x.ours.gflops, 1)} |`), `row n = ${x.n} of ${md}`);
  const svg = chart(sections);
  assert.match(svg, /^<\?xml[^]*<svg[^]*<\/svg>\n$/);
  const points = core.summarize(s.records).reduce((k, x) => k + ['vsOrt', 'simdVsOrt', 'vsTfjs'].filter((c) => x[c] !== undefined).length, 0);
  assert.equal((svg.match(/<circle /g) ?? []).length, points, 'one point per ratio');
  return blocks;
}

const options = { ...core.parseArgs(['--sizes', '32', '--heads', '2', '--runs', '1']), warmupMs: 0 };
// Every build the runtime runs: the relaxed one adds a SIMD128 row (Chromium; Node only with its
// relaxed-SIMD flag).
const expectedFor = (fastest) => ['attnlens', 'attnlens-weights', ...(fastest === 'relaxed' ? ['attnlens-simd'] : []),
  'attnlens-scalar', 'ort-plain', 'ort-mha', 'ort-attention23', 'tfjs-wasm', 'plain-js'];

function checkRecords(records, ceiling) {
  const fastest = records[0].build;
  const expected = expectedFor(fastest);
  assert.deepEqual(records.map((r) => r.peer), expected);
  for (const r of records) {
    assert.equal(r.error, undefined, `${r.peer}: ${r.error}`);
    assert.ok(r.maxAbsDiff <= 1e-5, `${r.peer} differs from attnlens by ${r.maxAbsDiff}`);
    assert.ok(r.ms > 0 && r.runs === 1, `${r.peer} was timed`);
  }
  const report = core.formatReport(records, { env: 'test', ceiling });
  assert.match(report, fastest === 'relaxed' ? /\| 2 \| 32 \| attnlens relaxed SIMD, output only \|/
    : /\| 2 \| 32 \| attnlens SIMD128, output only \|/);
  assert.match(report, /Ceiling, GFLOP\/s: the best of 8, 12, 16 and 24 independent f32x4 chains/);
  assert.match(report, /independent \(a hand-encoded module, scripts\/bench\/wasm-probe\.js\) mul\+add \d/);
  // Both probes ran, and the ceiling is the higher of the two per instruction.
  for (const op of ['mulAdd', ...(ceiling.ours.fma ? ['fma'] : [])]) {
    assert.ok(ceiling.ours[op].gflops > 0 && ceiling.independent[op].gflops > 0, op);
    assert.equal(ceiling[op].gflops, Math.max(ceiling.ours[op].gflops, ceiling.independent[op].gflops), op);
  }
  assert.equal(core.jsonLines(records, { runtime: 'node' }).split('\n').length, expected.length);
}

describe('benchmark smoke test (n = 32, h = 2)', () => {
  it('in Node: every peer agrees with attnlens', async () => {
    const { lens, peers } = await loadPeers(options.peers);
    const ceiling = core.measureCeiling(lens, { runs: 3, iterations: 1e5 });  // calls long enough for any clock
    assert.ok(ceiling.gflops > 0 && ceiling.mulAdd.gflops > 0);
    const records = await core.runBenchmark({ ...options, peers, ceiling });
    checkRecords(records, ceiling);
    assert.ok(records.find((r) => r.peer === 'attnlens').heapBytesPerCall > 0);
    // The same records through record.js and report.mjs.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'attnlens-bench-'));
    try {
      const file = path.join(dir, 'node.json');
      writeSections(file, [{ section: 'attention', runtime: 'node', env: 'test', ceiling, records }], { command: 'npm run bench -- --sizes 32', fresh: true });
      const doc = JSON.parse(readFileSync(file, 'utf8'));
      assert.equal(doc.sections[0].machine.cores, os.availableParallelism?.() ?? os.cpus().length);
      checkAttentionReport(doc.sections, 'attention-node');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('from the command line: --json files, then report.mjs --update and --chart', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'attnlens-bench-'));
    try {
      const node = path.join(dir, 'node.json'), lm = path.join(dir, 'lm.json'), model = path.join(dir, 'model.json');
      // npm run bench with its threads section (appended to the same file by the child process).
      await run(process.execPath, [path.join(ROOT, 'scripts/bench/bench.mjs'), '--sizes', '32', '--heads', '2', '--runs', '1',
        '--peers', 'attnlens,ort,js', '--json', node], { cwd: ROOT, timeout: 600_000, env: { ...process.env, npm_lifecycle_event: '' } });
      await run(process.execPath, [path.join(ROOT, 'scripts/bench/lm.mjs'), '--runs', '1', '--steps', '8', '--json', lm], { cwd: ROOT, timeout: 300_000 });
      await run(process.execPath, [path.join(ROOT, 'scripts/bench/model.js'), '--runs', '1', '--json', model], { cwd: ROOT, timeout: 300_000 });
      const sections = JSON.parse(readFileSync(node, 'utf8')).sections;
      assert.deepEqual(sections.map((s) => [s.section, s.runtime]), [['attention', 'node'], ['threads', 'node']]);
      for (const s of sections) assert.equal(s.command, 'node scripts/bench/bench.mjs --sizes 32 --heads 2 --runs 1 --peers attnlens,ort,js');
      checkAttentionReport(sections, 'attention-node');
      const page = path.join(dir, 'performance.md'), svg = path.join(dir, 'bench-ratios.svg');
      const before = readFileSync(path.join(ROOT, 'docs/performance.md'), 'utf8');
      await writeFile(page, before);
      const { stderr } = await run(process.execPath, [path.join(ROOT, 'scripts/bench/report.mjs'), node, lm, model, '--update', page, '--chart', svg]);
      assert.match(stderr, /replaced attention-node, chart, threads-node, language-model-node|replaced .*attention-node/);
      const after = readFileSync(page, 'utf8');
      const block = (text, key) => text.match(new RegExp(`<!-- report:${key} -->\n([^]*?)\n<!-- /report:${key} -->`))?.[1];
      for (const key of ['attention-node', 'threads-node', 'language-model-node', 'model-node'])
        assert.match(block(after, key), /^Printed by `node scripts\/bench\/(bench\.mjs|lm\.mjs|model\.js)/, key);
      for (const r of JSON.parse(readFileSync(model, 'utf8')).sections[0].rows)
        assert.ok(block(after, 'model-node').includes(`| ${r.tokens} | ${fmt(r.ours.relaxed?.ms ?? r.ours.SIMD128.ms)} |`), `model row ${r.tokens}`);
      const lmSections = JSON.parse(readFileSync(lm, 'utf8')).sections;
      for (const s of lmSections) assert.ok(block(after, 'language-model-node').includes(`| ${s.build} | ${s.generate[0].tokensPerSecond.toFixed(0)} |`), s.build);
      // Blocks without results stay as they were; the chart is linked and written.
      for (const key of ['attention-chromium', 'threads-chromium', 'heatmap-frames-chromium'])
        assert.equal(block(after, key), block(before, key), key);
      assert.equal(block(after, 'chart'), '![peer time ÷ attnlens time by n](bench-ratios.svg)');
      assert.ok(existsSync(svg));
      // A file that is not a results file is refused with a message.
      await writeFile(path.join(dir, 'bad.json'), '{"records": []}');
      await assert.rejects(run(process.execPath, [path.join(ROOT, 'scripts/bench/report.mjs'), path.join(dir, 'bad.json')]),
        (e) => /not a benchmark results file/.test(e.stderr));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('report.mjs replaces only the blocks it has results for', () => {
    const text = 'a\n<!-- report:x -->\nold x\n<!-- /report:x -->\nb\n<!-- report:y -->\nold y\n<!-- /report:y -->\n';
    const { text: out, used, unused } = updateBlocks(text, { x: 'new x', z: 'new z' });
    assert.equal(out, 'a\n<!-- report:x -->\nnew x\n<!-- /report:x -->\nb\n<!-- report:y -->\nold y\n<!-- /report:y -->\n');
    assert.deepEqual([[...used], unused], [['x'], ['z']]);
  });

  it('in headless Chromium: every peer agrees with attnlens, and the frame test runs', async () => {
    const result = await runInBrowser({ ...options, frame: { n: 64, h: 2, frames: 2 },
      heatmapFrames: { n: 24, h: 2, d: 8, redraws: 2, warmup: 1 } });
    checkRecords(result.records, result.ceiling);
    // Chromium validates relaxed SIMD: the fastest build and its fused multiply-add ceiling.
    assert.equal(result.records[0].build, 'relaxed');
    assert.ok(result.ceiling.fma.gflops > 0 && result.ceiling.end.fma.gflops > 0);
    assert.equal(result.frame.n, 64);
    assert.ok(result.frame.medianMs > 0);
    // The <attn-heatmap> frame: each change redrawn and split into compute and render.
    // In a fresh page, and in the benchmarks' page after everything else ran there.
    // The isolated fresh page (COOP/COEP) runs the figure on the threaded engine.
    if (os.cpus().length > 1) assert.ok(result.heatmapFramesIsolated.heap.threads > 1, JSON.stringify(result.heatmapFramesIsolated.heap));
    for (const frames of [result.heatmapFrames, result.heatmapFramesAfter, result.heatmapFramesIsolated]) {
      assert.deepEqual([frames.n, frames.h, frames.d, Object.keys(frames.changes)], [24, 2, 8, ['temperature', 'scale', 'mask']]);
      // At n = 24 the engine call can take less than the page clock's resolution (0.1 ms without
      // cross-origin isolation), so its share may read 0.
      for (const s of Object.values(frames.changes))
        assert.ok(s.bestMs > 0 && s.computeMs >= 0 && s.renderMs > 0,
          JSON.stringify(s));
      // Unjudged: a head switch right after a temperature change, a change in the Mean view.
      assert.deepEqual(Object.keys(frames.views), ['head after temperature', 'temperature, mean view']);
      for (const s of Object.values(frames.views)) assert.ok(s.bestMs > 0 && s.renderMs > 0, JSON.stringify(s));
    }
    // What --json writes for this run, through report.mjs.
    const sections = browserSections(result, 'test').map((s) => ({ command: 'npm run bench:browser -- --sizes 32', machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length }, ...s }));
    const blocks = checkAttentionReport(sections, 'attention-chromium');
    for (const key of ['heatmap-frames-chromium', 'heatmap-long-chromium']) assert.match(blocks[key], /^Printed by `npm run bench:browser -- --sizes 32`/, key);
    for (const page of ['fresh', 'fresh-isolated', 'after-benchmarks'])
      assert.match(blocks['heatmap-frames-chromium'], new RegExp(`\\| ${page} \\| \\d+ \\| `), page);
  });
});
