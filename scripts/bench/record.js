// Benchmark results as JSON (`--json FILE`): each section a run prints (attention, threads, the
// heatmap's frames, …) with the command that printed it and the machine it ran on, so that
// scripts/bench/report.mjs can turn them into the tables of docs/performance.md and a chart, and
// no number is typed by hand. Node only.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';

// The load average when this process started: with the one at the end, it says how busy the
// (shared) machine was while the section ran.
const LOAD_AT_START = os.loadavg();

/** The machine and the moment: what a table's heading names. */
export function machine() {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown CPU', cores: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30), os: `${os.type()} ${os.release()}`,
    node: process.versions.node, v8: process.versions.v8, loadAverage: os.loadavg()[0], loadAverageStart: LOAD_AT_START[0], date: new Date().toISOString(),
  };
}

/**
 * The command as its user typed it, less `--json FILE`: `npm run <script> -- <args>` under npm,
 * else `node <script> <args>`. A benchmark that starts itself again (with a V8 flag) or a child section passes its
 * own command on in ATTNLENS_BENCH_COMMAND, so the child records what the user ran.
 */
export function commandLine(script, argv) {
  if (process.env.ATTNLENS_BENCH_COMMAND) return process.env.ATTNLENS_BENCH_COMMAND;
  const args = jsonArg(argv).rest.map((a) => (/^[\w.,:/=@-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
  const npm = process.env.npm_lifecycle_event;
  if (npm && /^bench/.test(npm)) return `npm run ${npm}${args ? ` -- ${args}` : ''}`;
  return `node ${script}${args ? ` ${args}` : ''}`;
}

/** The `--json FILE` value of argv (or null) and argv without it. */
export function jsonArg(argv) {
  const at = argv.indexOf('--json');
  if (at < 0) return { json: null, rest: argv };
  const json = argv[at + 1];
  if (!json || json.startsWith('--')) throw new Error('--json needs a file name');
  return { json, rest: [...argv.slice(0, at), ...argv.slice(at + 2)] };
}

/**
 * Adds `sections` ({ section, runtime, env, …data }) to `file`, each stamped with the command
 * and the machine. `fresh`: start the file anew (the first writer of a run); children append.
 */
export function writeSections(file, sections, { command, fresh = false }) {
  const doc = !fresh && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { kind: 'attnlens-bench', sections: [] };
  if (doc.kind !== 'attnlens-bench' || !Array.isArray(doc.sections))
    throw new Error(`${file} is not a benchmark results file (kind "attnlens-bench")`);
  const where = machine();
  for (const s of sections) doc.sections.push({ command, machine: where, ...s });
  writeFileSync(file, `${JSON.stringify(doc, null, 1)}\n`);
}
