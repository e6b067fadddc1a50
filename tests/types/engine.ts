// The engine entry, `attnlens`.
import { init, Lens, relaxedSimdSupported, simdSupported, threadsSupported } from 'attnlens';
import type {
  AttentionInto, AttentionOptions, AttentionResult, AttentionWeightsResult, Ceiling, EngineBuild, MemoryUse, MultiHeadResult,
} from 'attnlens';

const lens: Lens = await init();
const scalar: Promise<Lens> = init({ simd: false });
const supported: boolean = simdSupported();
const arch: string = lens.arch;
const simd: boolean = lens.simd;
const build: EngineBuild = lens.build;
const relaxed: boolean = relaxedSimdSupported();
const forced: Promise<Lens> = init({ build: 'simd' });
const threadedLens: Promise<Lens> = init({ threads: 2 });
const singleLens: Promise<Lens> = init({ build: 'relaxed', threads: false });
const threadCount: number = lens.threads;
const threaded: boolean = lens.threaded;
const canThread: boolean = threadsSupported();
const ceiling: Ceiling = lens.ceilingProbe({ iterations: 1e5, calls: 5, warmupMs: 50 });
const fmaBest: number | undefined = ceiling.fma?.gflops;
const mulAdd: number = ceiling.mulAdd.median;
const sample: number = lens.ceilingProbe(1e5).gflops;
const twoCounts = lens.ceilingProbe({ chains: [8, 24] });
const bestChains: number = twoCounts.chains;
const at24: number = twoCounts.mulAdd.byChains[24];

const q = new Float32Array(8), k = new Float32Array(12), v = new Float32Array(15);
const options: AttentionOptions = { dK: 4, dV: 5, heads: 1, causal: true, scale: 0.5, keyMask: new Uint8Array(3) };
const result: AttentionResult = lens.attention(q, k, v, options);
const weights: Float32Array = result.weights;
const output: Float32Array = lens.attention(q, k, v, { dK: 4, dV: 5 }).output;
const scores: Float32Array = lens.attention(q, k, v, { dK: 4, dV: 5, returnScores: true }).scores;
const outputOnly = lens.attention(q, k, v, { dK: 4, dV: 5, weights: false });
const x = new Float32Array(12), w = new Float32Array(16);
const mh: MultiHeadResult = lens.multiHead(x, { dModel: 4, heads: 2, wQ: w, wK: w, wV: w, wO: w, xKV: x, causal: false });
const memory: MemoryUse = lens.memory();

// Weights only (no A·V; v may be null) and results into the caller's arrays.
const into: AttentionInto = { weights: new Float32Array(6), output: new Float32Array(10) };
const weightsOnly: AttentionWeightsResult = lens.attention(q, k, null, { dK: 4, output: false });
const intoWeights: Float32Array = lens.attention(q, k, v, { dK: 4, dV: 5, output: false, into: { weights: into.weights } }).weights;
const both: AttentionResult = lens.attention(q, k, v, { dK: 4, dV: 5, into });
const scoresInto: Float32Array | undefined = lens.attention(q, k, v, { dK: 4, output: false, into: { scores: new Float32Array(6) } }).scores;
const mhWeights: Float32Array = lens.multiHead(x, { dModel: 4, heads: 2, wQ: w, wK: w, output: false }).weights;
const mhInto: MultiHeadResult = lens.multiHead(x, { dModel: 4, wQ: w, wK: w, wV: w, into: { weights: new Float32Array(9), output: new Float32Array(12) } });
// @ts-expect-error without the output the result has only the weights
weightsOnly.output.length;
// @ts-expect-error into takes Float32Arrays
lens.attention(q, k, v, { dK: 4, into: { weights: new Float64Array(6) } });
// @ts-expect-error into knows weights, output and scores only
lens.attention(q, k, v, { dK: 4, into: { weight: new Float32Array(6) } });
// @ts-expect-error v may be null only when the output is not computed
lens.attention(q, k, null, { dK: 4 });
// @ts-expect-error multiHead with the output needs wV
lens.multiHead(x, { dModel: 4, wQ: w, wK: w });
// @ts-expect-error multiHead weights only has no output
lens.multiHead(x, { dModel: 4, wQ: w, wK: w, output: false }).output.length;
const bytes: number = memory.inUse + memory.heapSize;

// @ts-expect-error without weights the result has only the output
outputOnly.weights.length;
// @ts-expect-error dK is required
lens.attention(q, k, v, {});
const mean: Float32Array = lens.aggregate(weights, { heads: 2, mode: 'mean' });
const max: Float32Array = lens.aggregate(weights, { heads: 2, nQ: 3, nK: 3, mode: 'max', into: new Float32Array(9) });
const rolled: Float32Array = lens.rollout([weights, weights], { heads: 2, residual: 0.5 });
// @ts-expect-error mode is 'mean' or 'max'
lens.aggregate(weights, { heads: 2, mode: 'sum' });
// @ts-expect-error aggregate needs heads
lens.aggregate(weights, { nQ: 3 });
// @ts-expect-error rollout takes an array of layers
lens.rollout(weights, { heads: 2 });
// @ts-expect-error the inputs are Float32Arrays, not plain arrays
lens.attention([1, 2, 3, 4], k, v, { dK: 4 });
// @ts-expect-error nor Float64Arrays
lens.attention(q, new Float64Array(12), v, { dK: 4 });
// @ts-expect-error causal is a boolean
lens.attention(q, k, v, { dK: 4, causal: 'yes' });
// @ts-expect-error a misspelt option
lens.attention(q, k, v, { dK: 4, casual: true });
// @ts-expect-error the mask is a Uint8Array
lens.attention(q, k, v, { dK: 4, keyMask: [1, 1, 0] });
// @ts-expect-error multiHead needs wQ, wK and wV
lens.multiHead(x, { dModel: 4, wK: w, wV: w });
// @ts-expect-error init knows only { build, simd, threads }
init({ workers: 4 });
// @ts-expect-error threads is a boolean or a number
init({ threads: 'auto' });
// @ts-expect-error read-only
lens.threads = 4;
// @ts-expect-error builds are named
init({ build: 'avx' });
// @ts-expect-error a single sample has no fma field
lens.ceilingProbe(1e5).fma;
// @ts-expect-error the probe has 8, 12, 16 or 24 chains
lens.ceilingProbe({ chains: [10] });
// @ts-expect-error results are read, not written
lens.simd = false;
// @ts-expect-error the engine is created by init(), not new
new Lens();

export { threadedLens, singleLens, threadCount, threaded, canThread };
export { build, relaxed, forced, ceiling, fmaBest, mulAdd, sample };
export { scalar, supported, arch, simd, weights, output, scores, mh, bytes, mean, max, rolled, intoWeights, both, scoresInto, mhWeights, mhInto };
