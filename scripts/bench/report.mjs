// Turns the benchmarks' JSON (`--json FILE` of bench.mjs, browser.mjs, threads*.mjs, model.js,
// lm.mjs) into the Markdown tables of docs/performance.md and an SVG chart of the ratios against
// the peers by size, so that no number there is typed by hand. Every table is headed by the
// command that printed its numbers and the machine it ran on.
//   node scripts/bench/report.mjs RESULTS.json… [--update docs/performance.md] [--chart docs/img/bench-ratios.svg]
// Without --update the tables go to standard output. With it, each `<!-- report:KEY -->` …
// `<!-- /report:KEY -->` block of the file is replaced by the table of that KEY (attention-node,
// attention-chromium, threads-node, threads-chromium, heatmap-frames-chromium,
// heatmap-long-chromium, heatmap-first-draw-chromium, model-node, language-model-node,
// language-model-chromium; models and models-big from `npm run bench:models --json`; chart); keys
// the results do not have are left as they are, and named on standard error.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { summarize } from './core.js';
import { summarizeThreads } from './threads.js';
import { formatBig, formatModels } from './models-report.js';

const fmt = (x, digits = 2) => (x === undefined || x === null || Number.isNaN(x) ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(digits));
const pct = (x) => (x === undefined ? '–' : `${x.toFixed(0)} %`);
const GRAPHS = { 'ort-plain': 'MatMul→Softmax→MatMul', 'ort-mha': 'MultiHeadAttention', 'ort-attention23': 'Attention-23' };
const graph = (r) => GRAPHS[r.peer] ?? r.label ?? r.peer;
const row = (cells) => `| ${cells.join(' | ')} |`;
const rule = (aligns) => `|${aligns.map((a) => (a === 'r' ? '---:' : '---')).join('|')}|`;

/** "Printed by `command` on <machine>, <date>." */
export function heading(s) {
  const m = s.machine ?? {};
  const runtime = s.runtime === 'chromium' ? `headless Chromium ${s.browser ?? ''}`.trim() : `Node ${m.node} (V8 ${m.v8})`;
  // A section run later in its process (the threads page) carries its own start load.
  const clock = s.cpuTime ? 'process CPU time' : 'wall clock';
  return `Printed by \`${s.command}\` on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; ${runtime}; ` +
    `${(m.date ?? '').slice(0, 16).replace('T', ' ')} UTC, ${busy(s.loadAverageStart ?? m.loadAverageStart, m.loadAverage, m.cores)}; ${clock}.`;
}

/**
 * How busy the machine was: the load averages (1 min) at the start and the end of the section,
 * and, when either is above ~half the cores, that other work shared the cores, so that the
 * reader takes the ratios (contestants side by side in one run) and not the absolute times.
 */
export function busy(start, end, cores) {
  const loads = [start, end].filter(Number.isFinite);
  const text = start === undefined ? `load average ${fmt(end)} at the end` : `load average ${fmt(start)} at the start, ${fmt(end)} at the end`;
  if (!loads.length || Math.max(...loads) <= Math.max(1, (cores ?? 2) / 2)) return `${text} (quiet)`;
  // The load average counts the bench's own threads too: it says the cores were busy, not by what.
  return `**shared, loaded machine**: ${text} on ${cores ?? '?'} cores (other work, or the bench's own threads, ` +
    'kept the cores busy; the ratios, taken side by side in one run, hold; the absolute times may be slowed)';
}

function ceilingLine(c) {
  if (!c?.ours) return '';
  const op = (x) => (x ? fmt(x.gflops, 1) : '–');
  return `Ceiling (GFLOP/s, best of 8–24 chains): ours mul+add ${op(c.ours.mulAdd)}, fused ${op(c.ours.fma)}; ` +
    `independent mul+add ${op(c.independent?.mulAdd)}, fused ${op(c.independent?.fma)}` +
    (c.end?.ours ? `; at the end ours ${op(c.end.ours.mulAdd)} / ${op(c.end.ours.fma)}, independent ` +
      `${op(c.end.independent?.mulAdd)} / ${op(c.end.independent?.fma)}` : '') + '.';
}

const TABLES = {
  attention(s) {
    const out = [heading(s), ceilingLine(s.ceiling), ''];
    const sums = summarize(s.records);
    for (const h of [...new Set(sums.map((x) => x.h))]) {
      out.push(`h = ${h} (d = 64; ×ORT = the best onnxruntime-web graph's time ÷ ours):`, '');
      out.push(row(['n', 'build', 'ms', 'GFLOP/s', '% ceiling', '+ weights ms', 'SIMD128 ms', 'SIMD128 % ceiling',
        'best ORT ms (graph)', '×ORT', '×ORT SIMD128', '×TF.js', '×plain JS', '×scalar']));
      out.push(rule(['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'r', 'r', 'r', 'r']));
      for (const x of sums.filter((y) => y.h === h))
        out.push(row([x.n, x.ours?.build ?? '–', fmt(x.ours?.ms), fmt(x.ours?.gflops, 1), pct(x.ours?.pctCeiling),
          fmt(x.weights?.ms), fmt(x.simd?.ms), pct(x.simd?.pctCeiling),
          x.ort ? `${fmt(x.ort.ms)} (${graph(x.ort)})` : '–', fmt(x.vsOrt), fmt(x.simdVsOrt),
          fmt(x.vsTfjs, 1), fmt(x.vsJs, 0), fmt(x.vsScalar, 1)]));
      out.push('');
    }
    return out;
  },
  threads(s) {
    const t = s.threads;
    const out = [heading(s), '', row(['h', 'n', 'build', '1 thread ms', `${t} threads ms`, '×1 thread', `best ORT ${t} threads ms (graph)`, '×ORT']),
      rule(['r', 'r', 'l', 'r', 'r', 'r', 'l', 'r'])];
    for (const x of summarizeThreads(s.records))
      out.push(row([x.h, x.n, x.threaded?.build ?? '–', fmt(x.single?.ms), fmt(x.threaded?.ms), fmt(x.speedup),
        x.ort ? `${fmt(x.ort.ms)} (${graph(x.ort)})` : '–', fmt(x.vsOrt)]));
    return [...out, ''];
  },
  'heatmap-frames'(sections) {
    const s = sections[0];
    const out = [heading(s), `\`<attn-heatmap>\` n = ${s.n}, h = ${s.h}, d = ${s.d} from Q, K, V; ${s.redraws} redraws per change, ` +
      'each from the change to updateComplete; temperature / scale / mask changes.', '',
      row(['page', 'engine threads', 'medians ms', 'best ms', 'worst ms', 'engine call ms', 'render ms']), rule(['l', 'r', 'l', 'l', 'l', 'l', 'l'])];
    for (const f of sections) {
      const c = Object.values(f.changes);
      const cells = (key) => c.map((x) => fmt(x[key], 1)).join(' / ');
      out.push(row([f.page, f.heap?.threads ?? 1, cells('medianMs'), cells('bestMs'), cells('worstMs'), cells('computeMs'), cells('renderMs')]));
    }
    return [...out, ''];
  },
  'heatmap-long'(s) {
    return [heading(s), '', row(['n', 'first draw ms', 'hover ms', 'wheel zoom ms', 'zoom step ms', 'pan step ms', 'hover at 16× ms']),
      rule(['r', 'r', 'r', 'r', 'r', 'r', 'r']),
      row([s.n, fmt(s.firstDrawMs, 1), fmt(s.hoverMs), fmt(s.wheelMs), fmt(s.zoomStepMs), fmt(s.panStepMs), fmt(s.hoverZoomedMs)]), ''];
  },
  'heatmap-first-draw'(s) {
    return [heading(s), '', row(['n', 'runs', 'data → updateComplete median ms', 'best ms', 'parseData ms', `one n² putImageData ms`]),
      rule(['r', 'r', 'r', 'r', 'r', 'r']),
      row([s.n, s.runs, fmt(s.drawMs), fmt(s.drawBestMs), fmt(s.parseMs), fmt(s.putImageDataMs)]), ''];
  },
  model(s) {
    const labels = Object.keys(s.rows[0]?.ours ?? {});
    const out = [heading(s), `${s.model} against ${s.peer}, both asked for the embedding and both layers' attention, interleaved, median of ${s.runs}:`, '',
      row(['tokens', ...labels.map((l) => `ours ${l} ms`), `${s.peer} ms`, ...labels.map((l) => `×TF.js ${l}`), 'max abs Δ embedding']),
      rule(['r', ...labels.map(() => 'r'), 'r', ...labels.map(() => 'r'), 'r'])];
    for (const r of s.rows)
      out.push(row([r.tokens, ...labels.map((l) => fmt(r.ours[l].ms)), fmt(r.tfjs.ms), ...labels.map((l) => fmt(r.tfjs.ms / r.ours[l].ms)),
        r.maxAbsDiffEmbedding.toExponential(1)]));
    return [...out, ''];
  },
  'language-model'(sections) {
    const s = sections[0];
    const lengths = s.run.map((r) => r.tokens);
    const out = [heading(s), '', row(['model module', ...s.generate.map((g) => `${g.mode} tokens/s`), ...lengths.map((n) => `run() ms at ${n}`)]),
      rule(['l', ...s.generate.map(() => 'r'), ...lengths.map(() => 'r')])];
    for (const x of sections)
      out.push(row([x.build, ...x.generate.map((g) => fmt(g.tokensPerSecond, 0)), ...x.run.map((r) => fmt(r.ms))]));
    return [...out, ''];
  },
};
// Sections reported together (one table for all pages or model modules of one run).
const GROUPED = new Set(['heatmap-frames', 'language-model']);

// `npm run bench:models` writes one document of its own (models.mjs): block `models` for the
// shapes' tables and issue 21's targets, `models-big` for `--big`. Its own headings step down
// under the page's (### → ####); the page's heading line replaces its first one.
const MODEL_KINDS = { 'bench:models': 'models', 'bench:models --big': 'models-big' };

function modelsBlock(d) {
  const s = { command: d.command ?? 'npm run bench:models', machine: d.machine ?? {}, runtime: 'node' };
  const browser = d.kind === 'bench:models' ? d.shapes?.find((x) => x.browser)?.browser?.browser : d.chromium?.browser;
  const text = d.kind === 'bench:models' ? formatModels(d.shapes, d.targets, d.env) : formatBig(d);
  const [first, ...rest] = text.split('\n');
  // --big's first line names the model; the shapes' tables name theirs in their own headings.
  const lead = d.kind === 'bench:models --big' ? [`${first.replace(/^## bench:models --big: /, '')}:`, ''] : [];
  const body = [...lead, ...rest.map((l) => (l.startsWith('### ') ? `#${l}` : l))].join('\n').trim();
  return [`${heading(s).replace(/\.$/, '')}${browser ? `; the page in headless Chromium ${browser}` : ''}.`, '', body].join('\n');
}

/** { key → Markdown } for every section of the given results documents. */
export function tables(docs) {
  const out = {};
  for (const d of docs.filter((x) => MODEL_KINDS[x?.kind])) {
    const key = MODEL_KINDS[d.kind];
    out[key] = out[key] ? `${out[key]}\n\n${modelsBlock(d)}` : modelsBlock(d);
  }
  docs = docs.filter((x) => !MODEL_KINDS[x?.kind]);
  const sections = docs.flatMap((d) => {
    if (d?.kind !== 'attnlens-bench' || !Array.isArray(d.sections))
      throw new Error('not a benchmark results file: expected { kind: "attnlens-bench", sections: [...] } (write one with --json FILE)');
    return d.sections;
  });
  for (const name of Object.keys(TABLES)) {
    for (const runtime of ['node', 'chromium']) {
      const these = sections.filter((s) => s.section === name && s.runtime === runtime);
      if (!these.length) continue;
      const key = `${name}-${runtime}`;
      out[key] = (GROUPED.has(name) ? TABLES[name](these) : these.flatMap((s) => TABLES[name](s))).join('\n').trim();
    }
  }
  return { tables: out, sections };
}

// ——— the chart: peer time ÷ ours, by n, one panel per runtime and head count ———

const SERIES = [
  { key: 'vsOrt', label: 'best onnxruntime-web graph ÷ ours (fastest build)', colour: '#1f4fb4', dark: '#8fb8ff' },
  { key: 'simdVsOrt', label: 'best onnxruntime-web graph ÷ ours (SIMD128)', colour: '#b4461f', dark: '#ffab8f' },
  { key: 'vsTfjs', label: 'TF.js-wasm ÷ ours (fastest build)', colour: '#1f7a3a', dark: '#8fe0a8' },
];

/** An SVG document (string) of the attention sections' ratios; null when there are none. */
export function chart(sections) {
  const panels = [];
  for (const s of sections.filter((x) => x.section === 'attention'))
    for (const h of [...new Set(s.records.map((r) => r.h))])
      panels.push({ title: `${s.runtime === 'chromium' ? 'Chromium' : 'Node'}, h = ${h}`, rows: summarize(s.records).filter((x) => x.h === h), s });
  if (!panels.length) return null;
  const W = 300, H = 200, M = { l: 40, r: 10, t: 24, b: 34 }, legend = 18 * SERIES.length + 10;
  const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts = [];
  panels.forEach((p, k) => {
    const x0 = k * W, values = p.rows.flatMap((r) => SERIES.map((c) => r[c.key]).filter((v) => v !== undefined));
    const top = Math.max(2.5, Math.ceil(Math.max(...values, 0) * 2) / 2);
    const sx = (i) => x0 + M.l + ((W - M.l - M.r) * (i + 0.5)) / p.rows.length;
    const sy = (v) => M.t + (H - M.t - M.b) * (1 - v / top);
    parts.push(`<text class="fg" x="${x0 + M.l}" y="14" font-size="12" font-weight="600">${esc(p.title)}</text>`);
    const step = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500].find((x) => top / x <= 6) ?? top / 5;
    for (let v = 0; v <= top + 1e-9; v += step)
      parts.push(`<line class="grid" x1="${x0 + M.l}" x2="${x0 + W - M.r}" y1="${sy(v)}" y2="${sy(v)}"${v === 1 ? ' stroke-dasharray="4 3"' : ''}/>`,
        `<text class="muted" x="${x0 + M.l - 4}" y="${sy(v) + 3}" font-size="9" text-anchor="end">${v}×</text>`);
    p.rows.forEach((r, i) => parts.push(`<text class="muted" x="${sx(i)}" y="${H - M.b + 14}" font-size="9" text-anchor="middle">${r.n}</text>`));
    parts.push(`<text class="muted" x="${x0 + (W + M.l) / 2}" y="${H - 6}" font-size="9" text-anchor="middle">n (tokens)</text>`);
    SERIES.forEach((c, j) => {
      const pts = p.rows.map((r, i) => [i, r[c.key]]).filter(([, v]) => v !== undefined);
      if (!pts.length) return;
      parts.push(`<polyline class="s${j}" fill="none" stroke-width="2" points="${pts.map(([i, v]) => `${sx(i).toFixed(1)},${sy(v).toFixed(1)}`).join(' ')}"/>`);
      for (const [i, v] of pts)
        parts.push(`<circle class="d${j}" cx="${sx(i).toFixed(1)}" cy="${sy(v).toFixed(1)}" r="3"><title>${esc(`${p.title}, n = ${p.rows[i].n}: ${c.label} ${v.toFixed(2)}×`)}</title></circle>`);
    });
  });
  SERIES.forEach((c, j) => parts.push(`<line class="s${j}" stroke-width="2" x1="10" x2="30" y1="${H + 14 + 18 * j}" y2="${H + 14 + 18 * j}"/>`,
    `<text class="fg" x="36" y="${H + 18 + 18 * j}" font-size="11">${esc(c.label)}</text>`));
  const notes = [...new Set(panels.map((p) => `${p.s.command} — ${p.s.machine?.cpu}, ${p.s.machine?.cores} cores, ${p.s.machine?.date?.slice(0, 10)}`)), 'dashed line: parity (1×)'];
  notes.forEach((note, i) => parts.push(`<text class="muted" x="10" y="${H + legend + 8 + 13 * i}" font-size="9">${esc(note)}</text>`));
  const width = Math.max(W * panels.length, 600), height = H + legend + 8 + 13 * notes.length;
  const style = `text{font-family:system-ui,sans-serif}.fg{fill:#1b1f24}.muted{fill:#5c6570}.grid{stroke:#d3d8df}` +
    SERIES.map((c, j) => `.s${j}{stroke:${c.colour}}.d${j}{fill:${c.colour}}`).join('') +
    `@media (prefers-color-scheme:dark){.bg{fill:#16181c}.fg{fill:#e3e6ea}.muted{fill:#9aa3ad}.grid{stroke:#3a3f47}` +
    SERIES.map((c, j) => `.s${j}{stroke:${c.dark}}.d${j}{fill:${c.dark}}`).join('') + '}';
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" role="img"><title>Time of the peers ÷ time of attnlens, by sequence length</title>` +
    `<style>${style}</style><rect class="bg" width="100%" height="100%" fill="#ffffff"/>${parts.join('')}</svg>\n`;
}

/** `text` with each `<!-- report:KEY -->…<!-- /report:KEY -->` block whose KEY is in `blocks` replaced. */
export function updateBlocks(text, blocks) {
  const used = new Set();
  const out = text.replace(/(<!-- report:([\w-]+) -->\n)[^]*?(\n<!-- \/report:\2 -->)/g, (whole, open, key, close) => {
    if (!(key in blocks)) return whole;
    used.add(key);
    return `${open}${blocks[key]}${close}`;
  });
  return { text: out, used, unused: Object.keys(blocks).filter((k) => !used.has(k)) };
}

async function main(argv) {
  const option = (name) => {
    const at = argv.indexOf(name);
    if (at < 0) return null;
    const [value] = argv.splice(at, 2).slice(1);
    if (!value) throw new Error(`${name} needs a file name`);
    return value;
  };
  const update = option('--update'), chartFile = option('--chart');
  if (!argv.length) throw new Error('usage: node scripts/bench/report.mjs RESULTS.json… [--update docs/performance.md] [--chart FILE.svg]');
  const { tables: blocks, sections } = tables(argv.map((f) => JSON.parse(readFileSync(f, 'utf8'))));
  const svg = chart(sections);
  if (chartFile && svg) {
    writeFileSync(chartFile, svg);
    const rel = path.relative(path.dirname(update ?? chartFile), chartFile).split(path.sep).join('/');
    blocks.chart = `![${'peer time ÷ attnlens time by n'}](${rel})`;
  }
  if (!update) {
    for (const [key, md] of Object.entries(blocks)) console.log(`<!-- report:${key} -->\n${md}\n<!-- /report:${key} -->\n`);
    return;
  }
  const { text, used, unused } = updateBlocks(readFileSync(update, 'utf8'), blocks);
  writeFileSync(update, text);
  console.error(`[report] ${update}: replaced ${[...used].join(', ') || 'nothing'}` +
    (unused.length ? `; no block for ${unused.join(', ')}` : ''));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2)).catch((error) => {
    console.error(`report: ${error.message}`);
    process.exitCode = 1;
  });
