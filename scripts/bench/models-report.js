// The report of `npm run bench:models` (models.mjs): per shape a table of ours against
// onnxruntime-web (Node) and wllama (Chromium), then issue 21 §4's targets as ratios measured in
// the same run, each met or missed (or void when the contestants disagreed, or not measured).

const MiB = 2 ** 20;
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '—');
const mib = (b) => (!Number.isFinite(b) ? '—' : b < 10 * MiB ? `${(b / MiB).toFixed(2)} MiB` : `${(b / MiB).toFixed(0)} MiB`);

/** Bytes of the KV cache at the context, in float32 (what ours keeps). */
export function kvCacheBytes(s) {
  return 2 * s.layers * s.context * (s.dim / s.heads) * s.kvHeads * 4;
}

const threadWord = (n) => `${n} thread${n > 1 ? 's' : ''}`;

const target = (id, what, ratio, need, extra = {}) => ({
  id, what, ratio, need, met: extra.reason ? null : Number.isFinite(ratio) ? ratio >= need : null, ...extra,
});

/** Every target of every shape: { shape, id, what, ratio, need, met, reason? }. */
export function judgeModels(shapes) {
  const out = [];
  for (const { shape: s, node, browser } of shapes) {
    const push = (t) => out.push({ shape: s.name, ...t });
    const one = node[0];
    const oursError = one.ours.F32?.error;
    const notOurs = oursError ? { reason: 'not judged: ours does not load this model (its message is in the table)' } : {};
    const voidNode = !oursError && one.agreement && !one.agreement.ok
      ? { reason: `void: onnxruntime-web and ours disagree (logits ${one.agreement.logitsMaxAbs}, attention ${one.agreement.attentionMaxAbs})` } : {};
    for (const r of node)
      for (const f of r.forward)
        push(target(`forward-${f.tokens}-${r.threads}t`, `forward pass with every layer's attention, ${f.tokens} tokens, both on ${threadWord(r.threads)}: onnxruntime-web's time ÷ ours`,
          f.ortMs / f.oursMs, 1.5, { ...notOurs, ...voidNode }));
    push(target('load', 'load from bytes: onnxruntime-web session creation ÷ ours (F32)', one.ort.createMs / one.ours.F32?.loadMs, 2, notOurs));
    for (const dtype of ['F32', 'F16']) {
      const o = one.ours[dtype];
      const weights = s.parameters * (dtype === 'F32' ? 4 : 2);
      push(target(`heap-${dtype}`, `heap after load (${dtype}): 1.2 × (weight bytes + KV cache at the context) ÷ heap`,
        (1.2 * (weights + kvCacheBytes(s))) / o?.heapBytes, 1, o?.error ? notOurs : {}));
    }
    push(target('heap-vs-ort', "heap after load (F32): onnxruntime-web's added memory (RSS) ÷ ours", one.ort.rssAddedBytes / one.ours.F32?.heapBytes, 2, notOurs));
    const bound = (gbs, dtype) => (gbs * 1e9) / s.weightBytesPerToken[dtype];
    const notOursHere = { reason: 'not judged: ours does not load this model here (its message is in the table)' };
    for (const dtype of ['F32', 'F16']) {
      for (const r of node) {
        const g = r.generate?.[dtype];
        push(target(`decode-bound-${dtype}-node-${r.threads}t`, `greedy decoding in Node (${dtype}), ${threadWord(r.threads)}: ours ÷ the bandwidth bound`,
          g?.decodeTokensPerSecond / bound(r.bandwidth?.start.gbs, dtype), 0.7, g ? {} : notOurs));
      }
      const b = browser?.ours[dtype];
      if (browser) push(target(`decode-bound-${dtype}-chromium`, `greedy decoding in Chromium (${dtype}): ours ÷ the bandwidth bound`,
        b?.greedy?.decodeTokensPerSecond / bound(browser.bandwidth.start.gbs, dtype), 0.7, b?.error ? notOursHere : {}));
      if (dtype === 'F16' && browser)
        push(target('heads-grid', `isolated page, ${dtype} model loaded: text changed → heads grid of ${b?.headsGrid?.tokens ?? 64} tokens redrawn, 500 ms ÷ the median`,
          500 / b?.headsGrid?.medianMs, 1, b?.error ? notOursHere : {}));
      for (const w of browser?.wllama[dtype] ?? []) {
        const mine = w.ours ?? b;  // ours on as many threads (older results: the one run of ours)
        const reason = mine?.error ? notOursHere.reason : w.error ? `wllama failed: ${w.error}`
          : !(w.agreement.sameIds && w.agreement.samePrompt) ? 'void: wllama and ours wrote different greedy ids' : undefined;
        const extra = reason ? { reason } : {};
        push(target(`decode-wllama-${dtype}-${w.threads}t`, `greedy tokens/s (${dtype}), ours ÷ wllama on ${w.threads} thread${w.threads > 1 ? 's' : ''}`,
          mine?.greedy?.decodeTokensPerSecond / w.decodeTokensPerSecond, 1.2, extra));
        push(target(`prefill-wllama-${dtype}-${w.threads}t`, `prefill tokens/s (${dtype}), ours ÷ wllama on ${w.threads} thread${w.threads > 1 ? 's' : ''}`,
          mine?.prefill?.tokensPerSecond / w.prefillTokensPerSecond, 1.5, extra));
      }
    }
  }
  return out;
}

function shapeTable({ shape: s, node, browser }) {
  const one = node[0];
  const lines = [`### ${s.name}: ${s.note}, ${s.parameters.toLocaleString('en-US')} parameters, random weights`,
    '', '| measurement | ours | peer | peer ÷ ours (time) or ours ÷ peer (rate) |', '|---|---|---|---|'];
  const row = (what, ours, peer, ratio) => lines.push(`| ${what} | ${ours} | ${peer} | ${ratio} |`);
  for (const dtype of ['F32', 'F16']) {
    const o = one.ours[dtype];
    row(`Node: load from bytes (${dtype} safetensors, ${mib(o?.fileBytes)})`, o?.error ? `does not load: ${o.error}` : `${fmt(o.loadMs, 0)} ms`,
      dtype === 'F32' ? `onnxruntime-web session: ${fmt(one.ort.createMs, 0)} ms` : '', dtype === 'F32' ? fmt(one.ort.createMs / o?.loadMs, 2) : '');
    row(`Node: heap after load (${dtype})`, o?.error ? '—' : `${mib(o.heapBytes)} (in use ${mib(o.heapInUse)})`,
      dtype === 'F32' ? `onnxruntime-web added RSS ${mib(one.ort.rssAddedBytes)}` : '', dtype === 'F32' ? fmt(one.ort.rssAddedBytes / o?.heapBytes, 2) : '');
  }
  if (one.agreement)
    row(`Node: agreement at ${one.agreement.tokens} tokens (before timing)`, `logits max |Δ| ${one.agreement.logitsMaxAbs.toExponential(1)} of ${fmt(one.agreement.logitsScale, 2)}`,
      `attention max |Δ| ${one.agreement.attentionMaxAbs.toExponential(1)}`, one.agreement.ok ? 'agree' : '**disagree: comparison void**');
  for (const r of node)
    for (const f of r.forward)
      row(`Node: forward + all attention, ${f.tokens} tokens, both on ${threadWord(r.threads)}`, f.oursMs === null ? '—' : `${fmt(f.oursMs)} ms`, `${fmt(f.ortMs)} ms`, fmt(f.ortMs / f.oursMs, 2));
  for (const r of node) {
    if (r.bandwidth) row(`Node, ${threadWord(r.threads)}: read bandwidth (start / end, best)`, `${fmt(r.bandwidth.start.gbs)} / ${fmt(r.bandwidth.end.gbs)} GB/s`, '', '');
    for (const dtype of ['F32', 'F16']) {
      const g = r.generate?.[dtype];
      if (!g) continue;
      const bound = (r.bandwidth.start.gbs * 1e9) / s.weightBytesPerToken[dtype];
      row(`Node, ${threadWord(r.threads)}: greedy ${g.tokens} tokens after a ${g.promptTokens}-token prompt (${dtype})`, `${fmt(g.decodeTokensPerSecond)} tokens/s`,
        `bound ${fmt(bound)} tokens/s`, fmt(g.decodeTokensPerSecond / bound, 2));
      row(`Node, ${threadWord(r.threads)}: prefill of ${g.prefill.tokens} tokens (${dtype})`, `${fmt(g.prefill.tokensPerSecond, 0)} tokens/s`, '', '');
    }
  }
  if (browser) {
    row(`Chromium ${browser.browser} (isolated: ${browser.crossOriginIsolated}): read bandwidth`, `${fmt(browser.bandwidth.start.gbs)} / ${fmt(browser.bandwidth.end.gbs)} GB/s`, '', '');
    for (const dtype of ['F32', 'F16']) {
      const b = browser.ours[dtype];
      if (b.error) {
        row(`Chromium (${dtype})`, `does not load: ${b.error}`, '', '');
        continue;
      }
      const bound = (browser.bandwidth.start.gbs * 1e9) / s.weightBytesPerToken[dtype];
      row(`Chromium, ${threadWord(b.threads ?? 0)}: greedy tokens/s (${dtype}) vs the bandwidth bound`, fmt(b.greedy.decodeTokensPerSecond), `bound ${fmt(bound)}`, fmt(b.greedy.decodeTokensPerSecond / bound, 2));
      if (b.headsGrid)
        row(`Chromium: text changed → heads grid (${b.headsGrid.layers} layers × ${b.headsGrid.heads} heads, ${b.headsGrid.tokens} tokens) redrawn (${dtype})`,
          `${fmt(b.headsGrid.medianMs, 0)} ms (lm.run ${fmt(b.headsGrid.runMs, 0)} ms; first draw ${fmt(b.headsGrid.firstMs, 0)} ms)`, 'target 500 ms', fmt(500 / b.headsGrid.medianMs, 2));
      for (const w of browser.wllama[dtype]) {
        if (w.error) {
          row(`Chromium: wllama ${w.threads} thread(s) (${dtype})`, '', `failed: ${w.error}`, '');
          continue;
        }
        const a = w.agreement, mine = w.ours ?? b;
        if (mine.error) {
          row(`Chromium, ours on ${threadWord(w.threads)} (${dtype})`, `does not load: ${mine.error}`, '', '');
          continue;
        }
        row(`Chromium: load (${dtype}), wllama ${w.threads} thread(s)`, `${fmt(b.loadMs, 0)} ms`, `${fmt(w.loadMs, 0)} ms`, fmt(w.loadMs / b.loadMs, 2));
        row(`Chromium: agreement with wllama ${w.threads}t (${dtype})`, `same ids: ${a.sameIds}, same prompt: ${a.samePrompt}`,
          `top-3 p max |Δ| ${a.topProbabilityMaxAbs?.toExponential(1) ?? '—'}`, a.sameIds && a.samePrompt ? 'agree' : '**disagree: void**');
        row(`Chromium: greedy tokens/s (${dtype}), both on ${threadWord(w.threads)}`, fmt(mine.greedy.decodeTokensPerSecond), fmt(w.decodeTokensPerSecond), fmt(mine.greedy.decodeTokensPerSecond / w.decodeTokensPerSecond, 2));
        row(`Chromium: prefill tokens/s of ${mine.prefill.tokens} (${dtype}), both on ${threadWord(w.threads)}`, fmt(mine.prefill.tokensPerSecond, 0), fmt(w.prefillTokensPerSecond, 0), fmt(mine.prefill.tokensPerSecond / w.prefillTokensPerSecond, 2));
      }
    }
  }
  return lines.join('\n');
}

export function formatModels(shapes, targets, env) {
  const load = env.loadAverage;
  const parts = [`## bench:models — Node ${env.node}, ${env.cpu}, ${env.cores} cores; load average ${load.start[0].toFixed(2)} at the start, ${load.end?.[0].toFixed(2)} at the end`];
  for (const s of shapes) parts.push('', shapeTable(s));
  parts.push('', '### Targets (issue 21 §4), ratios in this run', '', '| shape | target | ratio | need | |', '|---|---|---|---|---|');
  for (const t of targets)
    parts.push(`| ${t.shape} | ${t.what} | ${fmt(t.ratio, 2)} | ≥ ${t.need} | ${t.met === null ? t.reason ?? 'not measured' : t.met ? 'met' : `missed (${fmt(t.ratio / t.need * 100, 0)} % of it)`} |`);
  return parts.join('\n');
}

/** The report of `--big` (models-big.mjs): load time, memory and tokens/s per runtime, or what stopped it. */
export function formatBig(r) {
  const side = (name, x) => {
    if (!x) return `- ${name}: not run`;
    if (x.error) return `- ${name}: **stopped**: ${x.error}${x.rssAddedBytes ? ` (process memory grew ${(x.rssAddedBytes / MiB).toFixed(0)} MiB before it)` : ''}`;
    const g = x.greedy;
    return `- ${name}: loaded in ${x.loadMs.toFixed(0)} ms${x.streamed ? ' (streamed from its URL: more than one buffer of the page holds)' : ''}, heap ${(x.heapBytes / MiB).toFixed(0)} MiB` +
      `${x.heapInUse ? ` (in use ${(x.heapInUse / MiB).toFixed(0)} MiB` +
        `${x.memory ? `: weights ${(x.memory.weights / MiB).toFixed(0)}, KV cache ${(x.memory.kvCache / MiB).toFixed(0)}, scratch ${(x.memory.scratch / MiB).toFixed(0)} MiB` : ''})` : ''}` +
      `${x.peakRssBytes ? `, process RSS at its peak ${(x.peakRssBytes / MiB).toFixed(0)} MiB (the file's bytes, read first, included)` : ''}` +
      `${g ? `, greedy ${g.decodeTokensPerSecond.toFixed(2)} tokens/s over ${g.tokens} tokens (first token after ${g.prefillMs.toFixed(0)} ms)` : ''}`;
  };
  const shards = r.shards ? ` the same bytes in ${r.shards.count} shards (${r.shards.bytes.map((b) => `${(b / MiB).toFixed(0)} MiB`).join(' + ')})` : '';
  return [`## bench:models --big: ${r.shape.name} (${r.shape.note}), ${r.shape.parameters.toLocaleString('en-US')} parameters, ${r.dtype} random weights, ` +
    `safetensors ${(r.fileBytes / MiB).toFixed(0)} MiB`, side('Node, one file', r.node),
  ...(r.nodeShards ? [side(`Node,${shards}`, r.nodeShards)] : []),
  side(`Chromium ${r.chromium?.browser ?? ''} (isolated page), one file`, r.chromium),
  ...(r.chromiumShards ? [side(`Chromium (isolated page),${shards}`, r.chromiumShards)] : [])].join('\n');
}
