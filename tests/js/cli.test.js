// The command line in Node: exit codes and messages for bad input (missing file, bad JSON, bad
// option, bad data: the message names what is wrong), every token escaped, options reaching the
// figure, PNG through the optional rasteriser (its pixels are the weights' colours), figure
// discovery, and the bin of the installed tarball.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { PNG } from 'pngjs';

import { themeFor } from '../../web/elements/lib/theme.js';
import { figureNames, render } from '../../web/cli/render.js';
import { installInto, pack, remove } from './pack.js';

const CLI = fileURLToPath(new URL('../../web/cli/attnlens.js', import.meta.url));
const HOSTILE = ['<script>alert(1)</script>', '&', '"', "'", ']]>', '<!--'];

function run(args, input) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
    if (input !== undefined) child.stdin.end(input);
  });
}

describe('attnlens command line', () => {
  let dir, good;
  const data = { tokens: ['the', 'cat', 'sat', 'down'], attention: [[[0.7, 0.1, 0.1, 0.1], [0.2, 0.6, 0.1, 0.1], [0.1, 0.1, 0.2, 0.6], [0.25, 0.25, 0.25, 0.25]]] };
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'attnlens-cli-'));
    good = path.join(dir, 'data.json');
    await writeFile(good, JSON.stringify(data));
    await writeFile(path.join(dir, 'bad.json'), '{"tokens": ["a",');
    await writeFile(path.join(dir, 'empty.json'), '{"tokens": [], "attention": [[1]]}');
    await writeFile(path.join(dir, 'weights.json'), '{"tokens": ["a", "b"], "attention": [[1, 0], [0.5, 1.7]]}');
    await writeFile(path.join(dir, 'vectors.json'), '{"tokens": ["a", "b"], "Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]]}');
    await writeFile(path.join(dir, 'cross.json'), '{"queryTokens": ["x"], "keyTokens": ["a", "b"], "attention": [[[0.5, 0.5]], [[1, 0]]]}');
    await writeFile(path.join(dir, 'nan.json'), '{"tokens": ["a", "b"], "attention": [[NaN, 1], [0.5, 0.5]]}');
    await writeFile(path.join(dir, 'huge.json'), '{"tokens": ["a", "b"], "Q": [[1, 2], [3, 1e39]], "K": [[1, 2], [3, 4]]}');
    await writeFile(path.join(dir, 'overflow.json'), '{"tokens": ["a", "b"], "Q": [[1e30, 1], [3, 4]], "K": [[1e30, 2], [-1e30, 4]]}');
    await writeFile(path.join(dir, 'hostile.json'), JSON.stringify({ tokens: HOSTILE, attention: Array.from({ length: 6 }, () => Array(6).fill(1 / 6)) }));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('exits non-zero with a message that names the problem', async () => {
    const cases = [
      [['render', path.join(dir, 'missing.json')], 1, /missing\.json: no such file/],
      [['render', path.join(dir, 'bad.json')], 1, /bad\.json is not valid JSON/],
      [['render', path.join(dir, 'empty.json')], 1, /empty\.json: tokens is empty/],
      [['render', path.join(dir, 'weights.json')], 1, /weights\.json: attention\[1\]\[1\] is 1\.70*\d*: weights lie between 0 and 1/],
      [['render', good, '--figure', 'sankey'], 2, /unknown figure "sankey": the figures are .*heatmap/],
      [['render', good, '--format', 'gif'], 2, /unknown format "gif"/],
      [['render', good, '--theme', 'sepia'], 2, /--theme must be light or dark/],
      [['render', good, '--layer', '3'], 2, /--layer 3 is out of range: the data has 1 layer/],
      [['render', good, '--query', 'dog'], 2, /--query "dog" is not one of the tokens/],
      [['render', good, '--mask', 'sideways'], 2, /--mask: mask must be none, causal/],
      [['render', good, '--width=-5'], 2, /--width must be a number > 0/],
      [['render', good, '--colour', 'red'], 2, /Unknown option '--colour'/],
      [['render'], 2, /render needs a data file/],
      [['draw', good], 2, /unknown command "draw"/],
      [['render', good, '--figure', 'pipeline'], 1, /attn-pipeline needs vectors/],
      [['render', good, '--figure', 'compare'], 2, /compare figure cannot be rendered from one data file/],
      [['render', good, '--heads', 'all'], 2, /unknown option --heads for the heatmap figure/],
      [['render', good, '--figure', 'lines', '--threshold', '2'], 2, /threshold must be a number from 0/],
      [['render', good, '--figure', 'lines', '--key', 'dog'], 2, /--key "dog" is not one of the tokens/],
      [['render', good, '--hide', 'the cat sat down'], 2, /hide removes every/],
      [['render', path.join(dir, 'vectors.json'), '--figure', 'pipeline', '--head', 'mean'], 2, /the pipeline figure shows one head at a time/],
      [['render', path.join(dir, 'cross.json'), '--layer', 'rollout'], 2, /--layer rollout: layer="rollout" needs self-attention: these weights are 1×2/],
      [['render', good, '--hide', 'teh'], 2, /--hide "teh" is not one of the tokens/],
      [['render', good, '--hide', 'the', '--renormalize=maybe'], 2, /--renormalize must be true or false \(got "maybe"\)/],
      [['render', good, '--figure', 'lines', '--heads', '0 3'], 2, /--heads 3 is out of range: the data has 1 head\(s\)/],
      [['render', good, '--query', '-2'], 2, /--query "-2" is not one of the tokens/],
      [['render', good, '-o', path.join(dir, 'figure.gif')], 2, /cannot write .*figure\.gif: \.gif is not a format made here \(svg, html, png\)/],
      [['render', good, '-o', path.join(dir, 'no/such/folder.svg')], 1, /cannot write .*folder\.svg: its folder does not exist/],
      [['render', dir], 1, /cannot read .*: it is a folder, not a data file/],
      [['render', path.join(dir, 'nan.json')], 1, /nan\.json is not valid JSON: .*NaN and Infinity are not JSON/],
      [['render', path.join(dir, 'huge.json')], 1, /huge\.json: Q\[1\]\[1\] is 1e\+39: beyond float32's range/],
      [['render', path.join(dir, 'overflow.json'), '--figure', 'pipeline'], 1, /overflow\.json: the score of query 0 and key 0 \(Q·K\) is beyond float32's range/],
    ];
    for (const [args, code, message] of cases) {
      const r = await run(args);
      assert.equal(r.code, code, `${args.join(' ')}: exit code (stderr: ${r.stderr})`);
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /^attnlens: /);
      assert.equal(r.stdout, '', 'nothing on standard output');
    }
  });

  it('escapes every token in every figure that shows them', async () => {
    for (const figure of ['heatmap', 'bars', 'heads', 'lines']) {
      const r = await run(['render', path.join(dir, 'hostile.json'), '--figure', figure, '--query', '0']);
      assert.equal(r.code, 0, r.stderr);
      const svg = r.stdout;
      assert.ok(svg.startsWith('<?xml') && svg.trimEnd().endsWith('</svg>'), figure);
      const body = svg.replace(/<title>[^<]*<\/title>/, '');
      assert.ok(!/<(script|!--)/.test(svg), `${figure}: no markup from a token`);
      assert.ok(!/&(?!(amp|lt|gt|quot|#39);)/.test(svg), `${figure}: every & is an entity`);
      assert.ok(!body.includes(']]>'), `${figure}: text, not CDATA`);
      assert.ok(svg.includes('&lt;script&gt;') || svg.includes('&lt;scr'), `${figure}: the token is there, escaped`);
    }
  });

  it('reads standard input, writes -o, takes the format from the extension, applies the state', async () => {
    const out = path.join(dir, 'out.svg');
    const r = await run(['render', '-', '--figure', 'bars', '--query', 'sat', '--theme', 'dark', '--width', '300', '-o', out], JSON.stringify(data));
    assert.equal(r.code, 0, r.stderr);
    const svg = await readFile(out, 'utf8');
    assert.equal(svg, await render(data, { figure: 'bars', query: 2, theme: 'dark', width: 300 }));
    assert.match(svg, /^<\?xml[^>]*>\n<svg [^>]*width="300" height="[\d.]+" viewBox="0 0 412 /);
    assert.ok(svg.includes('Where “sat” looks'));
    assert.ok(svg.includes(`fill="rgb(${themeFor('dark').bg.join(', ')})"`), 'dark background');
    const html = path.join(dir, 'out.html');
    assert.equal((await run(['render', good, '-o', html])).code, 0);
    assert.match(await readFile(html, 'utf8'), /^<!doctype html>/);
  });

  it('negative values and switches as an author types them; --width for every format', async () => {
    const none = await run(['render', good, '--query', '-1', '--hide', 'down', '--renormalize']);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, await render(data, { query: -1, hide: 'down', renormalize: true }));
    assert.ok(!none.stdout.includes('>down<'), 'the hidden token is gone');
    const html = await run(['render', good, '--figure', 'bars', '--format', 'html', '--width', '320']);
    assert.equal(html.code, 0, html.stderr);
    // The width is a rule of the page's one style sheet, which the file's CSP allows by hash.
    const style = html.stdout.match(/<style>([\s\S]*?)<\/style>/)[1];
    assert.match(style, /^attn-bars \{ width: 320px; max-width: 100%; \}$/m);
    const csp = html.stdout.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)[1].replaceAll('&#39;', "'");
    assert.ok(csp.includes(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`), csp);
    assert.ok(!(await render(data, { format: 'html' })).includes('width: 320px'));
    for (const figure of ['heatmap', 'bars', 'heads', 'lines']) {
      const svg = await render(data, { figure, width: 250 });
      assert.match(svg, /<svg [^>]*width="250" height="[\d.]+" viewBox="0 0 [\d.]+ [\d.]+"/, figure);
    }
  });

  it('the Python helper passes booleans, lists and negative numbers as the command line takes them', async () => {
    const helper = path.join(dir, 'attnlens_nb.py');
    const made = await run(['python']);
    assert.equal(made.code, 0, made.stderr);
    await writeFile(helper, made.stdout);
    const tokens = ['[CLS]', 'the', 'cat', '[SEP]'];
    const weights = data.attention;  // one head, as [heads][n][n] inside a per-layer [batch, heads, n, n]
    const script = `import sys, json; sys.path.insert(0, ${JSON.stringify(dir)}); import attnlens_nb as a
w = ${JSON.stringify([[weights]])}
t = ${JSON.stringify(tokens)}
print(json.dumps([a.render(tuple(w), t, query=-1, hide=["[CLS]", "[SEP]"], renormalize=True),
                  a.render(tuple(w), t, figure="lines", heads=[0], hide=[0], renormalize=False)]))`;
    const python = await new Promise((resolve) => execFile('python3', ['-c', script], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => resolve({ error, stdout, stderr })));
    // scripts/setup.sh installs python3 on every machine that runs the suite: its absence fails.
    assert.notEqual(python.error?.code, 'ENOENT', 'python3 is missing: run scripts/setup.sh (it installs python3)');
    assert.equal(python.error, null, python.stderr);
    const [heatmap, lines] = JSON.parse(python.stdout);
    const same = { tokens, attention: [weights] };
    assert.equal(heatmap, await render(same, { query: -1, hide: '[CLS] [SEP]', renormalize: true }));
    assert.equal(lines, await render(same, { figure: 'lines', heads: '0', hide: '0' }));
  });

  it('PNG through @resvg/resvg-js: the size, and cell colours that read back to the weights', async () => {
    // An optional dependency for users, but npm install (scripts/setup.sh) brings it: its absence fails.
    await assert.doesNotReject(import('@resvg/resvg-js'), '@resvg/resvg-js is missing: run npm install (scripts/setup.sh)');
    const out = path.join(dir, 'out.png');
    const r = await run(['render', good, '--format', 'png', '--pixel-ratio', '2', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const png = PNG.sync.read(await readFile(out));
    const svg = await render(data);
    const [, w, h] = svg.match(/<svg [^>]*width="(\d+)" height="(\d+)"/).map(Number);
    assert.deepEqual([png.width, png.height], [w * 2, h * 2]);
    // Cell (i, j) of the n ≤ 64 heatmap is a <rect> with its weight; sample its centre.
    const scale = themeFor('light').scale;
    for (const m of svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="[^"]+" data-weight="([\d.e-]+)"/g)) {
      const [x, y, cw, ch, weight] = m.slice(1).map(Number);
      const at = (Math.round((y + ch / 2) * 2) * png.width + Math.round((x + cw / 2) * 2)) * 4;
      const got = scale.invert([png.data[at], png.data[at + 1], png.data[at + 2]]);
      assert.ok(Math.abs(got - weight) < 0.02, `cell at ${x},${y}: ${got} vs ${weight}`);
    }
  });

  it('npx attnlens works from the installed tarball (offline): the bin renders the same SVG', async () => {
    const packed = await pack();
    let project;
    try {
      project = await installInto(packed.tarball, { 'data.json': JSON.stringify(data) });
      const bin = path.join(project.dir, 'node_modules/.bin/attnlens');
      const { stdout } = await promisify(execFile)(bin, ['render', 'data.json', '--figure', 'bars', '--query', 'cat'], { cwd: project.dir });
      assert.equal(stdout, await render(data, { figure: 'bars', query: 'cat' }));
    } finally {
      await remove(project?.dir);
      await remove(packed.dir);
    }
  });

  it('finds the figures from web/elements/svg/ and lists them in help', async () => {
    const names = await figureNames();
    for (const name of ['heatmap', 'bars', 'heads', 'pipeline', 'lines']) assert.ok(names.includes(name), name);
    assert.ok(!names.includes('matrix-image'), 'helper modules are not figures');
    assert.ok(!names.includes('compare'), 'two-source figures are not offered');
    const help = await run(['help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, new RegExp(`--figure NAME +${names.join(' \\| ')}`));
  });
});
