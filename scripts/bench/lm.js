// The language-model benchmark body, shared by Node (scripts/bench/lm.mjs) and Chromium
// (scripts/bench/lm-page.js): generation speed in tokens per second (greedy and sampled, from
// BOS, with the KV cache) and ms per run() (one causal pass with every layer's attention copied
// out) at several lengths. Medians over `runs` timed repetitions after one warm-up.

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const wallClock = () => performance.now();

function time(fn, runs, clock) {
  fn();
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = clock();
    fn();
    ms.push(clock() - t);
  }
  return median(ms);
}

/**
 * { generate: [{ mode, tokens, ms, tokensPerSecond }], run: [{ tokens, ms }] } for `lm`;
 * `clock()` in ms (the wall clock, or e.g. the process's CPU time on a shared machine).
 */
export function benchLanguageModel(lm, { steps = 256, lengths = [16, 128, 512], runs = 5, clock = wallClock } = {}) {
  const time_ = (fn) => time(fn, runs, clock);
  const generate = [];
  for (const [mode, options] of [['greedy', { temperature: 0 }], ['sampled (T = 1, top-p 0.9)', { temperature: 1, topP: 0.9, seed: 7 }]]) {
    let tokens = 0;
    const ms = time_(() => { tokens = lm.generate('', { steps, ...options }).ids.length; });
    generate.push({ mode, tokens, ms, tokensPerSecond: (tokens / ms) * 1000 });
  }
  const storyIds = lm.tokenize(STORY.repeat(40)).ids;
  const run = [];
  for (const n of lengths) {
    if (n > lm.config.seqLen) continue;
    const ids = storyIds.slice(0, n);
    run.push({ tokens: n, ms: time_(() => lm.run(ids)) });
  }
  return { generate, run };
}

export function formatLanguageModelBench(result, where) {
  const lines = [`stories260K in ${where}`];
  for (const g of result.generate)
    lines.push(`  generate ${g.mode}: ${g.tokens} tokens in ${g.ms.toFixed(1)} ms = ${g.tokensPerSecond.toFixed(0)} tokens/s`);
  for (const r of result.run) lines.push(`  run() at ${r.tokens} tokens: ${r.ms.toFixed(2)} ms`);
  return lines.join('\n');
}

/** Lines comparing two results of the same benchmark: `b`'s time over `a`'s (> 1: `a` faster). */
export function formatLanguageModelRatio(a, b, nameA, nameB) {
  const lines = [`  ${nameB} time ÷ ${nameA} time (> 1: ${nameA} faster)`];
  a.generate.forEach((g, i) => lines.push(`    generate ${g.mode}: ${(b.generate[i].ms / g.ms).toFixed(2)}`));
  a.run.forEach((r, i) => lines.push(`    run() at ${r.tokens} tokens: ${(b.run[i].ms / r.ms).toFixed(2)}`));
  return lines.join('\n');
}
