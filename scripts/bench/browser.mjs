// npm run bench:browser [-- --sizes 128,256 --heads 8 --runs 7]
// The benchmark of bench.mjs in headless Chromium (playwright-core, /usr/bin/chromium), plus the
// frame test: does recomputing n = 512, h = 8 with weights and redrawing an n × n heatmap
// (putImageData) fit in a 16 ms frame? Files are served from 127.0.0.1 by scripts/serve.mjs; the
// ONNX graphs are built here with onnx-proto and handed to the page. `--json FILE` writes every
// section (attention, the raw frame, the heatmap at long inputs and its frames, threads) to FILE,
// with the command and the machine, for scripts/bench/report.mjs.
import os from 'node:os';

import { withBenchPage } from './bench-page.mjs';
import * as core from './core.js';
import { formatHeatmapFrames, heatmapFrames, measureHeatmapFrames } from './heatmap-frame.mjs';
import { buildModels } from './onnx-models.js';
import { commandLine, jsonArg, writeSections } from './record.js';
import { runThreadsInBrowser } from './threads-browser.mjs';

export async function runInBrowser(options, { log = () => {} } = {}) {
  const models = {};
  if (options.peers.includes('ort'))
    for (const h of options.heads) {
      const m = buildModels(h, options.d);
      models[`${h},${options.d}`] = Object.fromEntries(
        Object.entries(m).map(([k, bytes]) => [k, Buffer.from(bytes).toString('base64')]));
    }
  const result = await withBenchPage(async (page, context) => {
    const r = await page.evaluate(([o, m]) => window.attnlensBench(o, m), [options, models]);
    r.heatmapLong = await heatmapLong(page, options.heatmapLong);
    // The heatmap frame twice: here, after everything above ran in this page (its heap holds the
    // peers' modules and results), and below in a fresh page, which is what a reader's page is.
    r.heatmapFramesAfter = await heatmapFrames(page, options.heatmapFrames);
    r.browser = context.browser()?.version() ?? r.userAgent;
    return r;
  }, { log });
  result.heatmapFrames = await measureHeatmapFrames(options.heatmapFrames, { log });
  // A reader's page served with COOP/COEP (as `npm start` and `attnlens serve` do) runs the
  // threaded engine: the same figure there.
  result.heatmapFramesIsolated = await measureHeatmapFrames(options.heatmapFrames, { log, isolated: true });
  return result;
}

// <attn-heatmap> interaction timing at long inputs (scripts/bench/heatmap-long.js).
export function heatmapLong(page, options = { n: 4096 }) {
  return page.evaluate((o) => window.attnlensHeatmapLong(o), options);
}

export function formatHeatmapLong(r) {
  return `heatmap at n=${r.n} (precomputed, 1 head, 800 px): first draw ${r.firstDrawMs} ms; per frame (median of ` +
    `${r.samples}): hover ${r.hoverMs} ms, wheel zoom ${r.wheelMs} ms (to ${r.wheelZoom}×), zoom step ${r.zoomStepMs} ms, ` +
    `pan step ${r.panStepMs} ms, hover at 16× ${r.hoverZoomedMs} ms`;
}

/** runInBrowser's result as the sections of a `--json` file (record.js, report.mjs). */
export function browserSections(r, env) {
  const base = { runtime: 'chromium', env, browser: r.browser };
  return [
    { section: 'attention', ...base, ceiling: r.ceiling, records: r.records },
    { section: 'frame', ...base, ...r.frame },
    ...(r.heatmapLong ? [{ section: 'heatmap-long', ...base, ...r.heatmapLong }] : []),
    { section: 'heatmap-frames', ...base, page: 'fresh', ...r.heatmapFrames },
    { section: 'heatmap-frames', ...base, page: 'fresh-isolated', ...r.heatmapFramesIsolated },
    { section: 'heatmap-frames', ...base, page: 'after-benchmarks', ...r.heatmapFramesAfter },
  ];
}

async function main() {
  const argv = process.argv.slice(2);
  const { json, rest } = jsonArg(argv);
  const options = core.parseArgs(rest);
  if (options.help) {
    console.log(options.help);
    return;
  }
  options.frame = { n: 512, h: 8, d: options.d, frames: 30 };
  const log = (s) => console.error(s.startsWith('[bench]') ? s : `[page] ${s}`);
  log(`[bench] headless Chromium; sizes ${options.sizes}, heads ${options.heads}, ${options.runs} runs`);
  const { records, ceiling, frame, userAgent, browser, heatmapLong: long, heatmapFrames: frames,
    heatmapFramesAfter: framesAfter, heatmapFramesIsolated: framesIsolated } = await runInBrowser(options, { log });
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const env = `headless Chromium ${browser} (${userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? ''}), ${cpu}, ${os.cpus().length} cores, one thread`;
  console.log(core.formatReport(records, { ceiling, env }));
  console.log('\nTargets (issue 9; one thread, h = 8):');
  const judged = core.judgeTargets(records);
  console.log(core.formatTargets(judged));
  // The raw engine loop of earlier rounds (weights and output into fresh arrays + putImageData),
  // kept for comparison; the figure's frame, which issue 9 judges, is the <attn-heatmap> below.
  console.log(`         raw engine frame (not the figure): recompute n=${frame.n}, h=${frame.h} with weights ` +
    `+ putImageData of ${frame.n}×${frame.n}: median ${frame.medianMs.toFixed(1)} ms ` +
    `(attention ${frame.computeMs.toFixed(1)} ms + draw ${frame.drawMs.toFixed(1)} ms; p90 ${frame.p90Ms.toFixed(1)} ms) ` +
    `vs a 16 ms frame, ${frame.frames} frames`);
  console.log('');
  console.log(core.jsonLines(records, { ceiling, env, runtime: 'chromium' }));
  console.log(JSON.stringify({ kind: 'frame', runtime: 'chromium', env, ...frame }));
  console.log(formatHeatmapLong(long));
  console.log(JSON.stringify({ kind: 'heatmap-long', runtime: 'chromium', env, ...long }));
  console.log(formatHeatmapFrames({ ...frames, browser }, { where: 'fresh page, after the benchmarks above' }));
  console.log(formatHeatmapFrames({ ...framesIsolated, browser },
    { where: 'fresh cross-origin-isolated page (COOP/COEP), threaded engine', json: 'fresh-isolated' }));
  console.log(formatHeatmapFrames({ ...framesAfter, browser },
    { where: 'the benchmarks\' page, after everything above ran in it', judge: false, json: 'after-benchmarks' }));
  // Threads: a cross-origin-isolated page of its own (threads-browser.mjs); ATTNLENS_BENCH_NO_THREADS=1 skips it.
  const sections = browserSections({ records, ceiling, frame, browser, heatmapLong: long, heatmapFrames: frames,
    heatmapFramesAfter: framesAfter, heatmapFramesIsolated: framesIsolated }, env);
  if (!process.env.ATTNLENS_BENCH_NO_THREADS) console.log(`\n${await runThreadsInBrowser(argv, { log, sections })}`);
  if (json) writeSections(json, sections, { command: commandLine('scripts/bench/browser.mjs', argv), fresh: true });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
