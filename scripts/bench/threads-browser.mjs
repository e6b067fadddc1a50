// The threads section of `npm run bench:browser` (alone: node scripts/bench/threads-browser.mjs
// [--threads N] [--sizes …]): scripts/bench/threads-page.html served with COOP/COEP, so that the
// page is cross-origin isolated and both our threaded build and onnxruntime-web's threads run.
import os from 'node:os';

import { ISOLATION_HEADERS } from '../serve.mjs';
import { withBenchPage } from './bench-page.mjs';
import * as core from './core.js';
import { buildModels } from './onnx-models.js';
import { commandLine, jsonArg, writeSections } from './record.js';
import { formatThreads, threadsArg } from './threads.js';

/**
 * Runs the threads page; returns the printed section (table, targets, JSON lines) and, when
 * `sections` is given, adds the results to it for `--json` (record.js).
 */
export async function runThreadsInBrowser(argv, { log = () => {}, sections } = {}) {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const { threads, rest } = threadsArg(jsonArg(argv).rest, Math.max(2, Math.min(8, cores)));
  const options = core.parseArgs(rest);
  const models = {};
  for (const h of options.heads)
    models[`${h},${options.d}`] = Object.fromEntries(Object.entries(buildModels(h, options.d))
      .map(([k, bytes]) => [k, Buffer.from(bytes).toString('base64')]));
  const load = os.loadavg()[0];
  const result = await withBenchPage((page) => page.evaluate(([o, m, t]) => window.attnlensThreadsBench(o, m, t),
    [options, models, threads]), { log, headers: ISOLATION_HEADERS, pagePath: '/scripts/bench/threads-page.html' });
  const env = `headless Chromium (${result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? ''}), cross-origin isolated: ` +
    `${result.isolated}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${cores} cores, load average ${load.toFixed(2)} at the start, ` +
    `${os.loadavg()[0].toFixed(2)} at the end`;
  sections?.push({ section: 'threads', runtime: 'chromium', browser: result.userAgent.match(/Chrome\/([\d.]+)/)?.[1], env, threads,
    isolated: result.isolated, loadAverageStart: load, records: result.records });
  return `${formatThreads(result.records, { threads, env })}\n\n${core.jsonLines(result.records, { env, runtime: 'chromium' })
    .split('\n').map((l) => l.replace('"kind":"measurement"', '"kind":"threads"')).join('\n')}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2), sections = [];
  runThreadsInBrowser(argv, { log: (s) => console.error(`[page] ${s}`), sections })
    .then((text) => {
      console.log(text);
      const { json } = jsonArg(argv);
      if (json) writeSections(json, sections, { command: commandLine('scripts/bench/threads-browser.mjs', argv), fresh: true });
    }, (e) => { console.error(e); process.exitCode = 1; });
}
