// The language-model side of the model add-on: lens.loadModel('stories260K') and friends.
import { init } from 'attnlens';
import { loadModel, LanguageModel, type FillMaskResult, type GenerateResult, type LanguageModelMemory, type LmRunResult } from 'attnlens/model';

const lens = await init();
const lm: LanguageModel = await lens.loadModel('stories260K', { onProgress: ({ stage }) => void stage });
const kind: 'causal-lm' | 'masked-lm' | 'encoder' = lm.kind;
const seqLen: number = lm.config.seqLen + lm.config.kvHeads;
const r: LmRunResult = lm.run('Once upon a time');
const a: Float32Array = r.layers[0].attention;
const p: Float32Array | undefined = r.next ?? r.logits ?? r.hidden;
const g: GenerateResult = lm.generate('Once', { steps: 8, temperature: 0.8, topP: 0.9, seed: 7, onToken: (s) => s.id !== 2, stop: ['.'] });
const why: 'steps' | 'eos' | 'context' | 'stop' = g.stopped;
const row: Float32Array = g.steps[0].attention[0];
const firstP: number = g.steps[0].candidates[0].p;
const text: string = lm.decode(g.ids) + g.text + lm.tokenize('x').tokens.join('');
const fromBytes: LanguageModel = await loadModel(new Uint8Array(8), { tokenizer: new URL('https://127.0.0.1/tok512.bin') });
const fromHf: LanguageModel = await loadModel({ config: { hidden_size: 64 }, weights: new ArrayBuffer(8), tokenizer: 'tok512.bin' });
const bigSeed: number | bigint = lm.generate('Once', { seed: 2n ** 63n }).seed;
const build: 'relaxed' | 'simd' = lm.info.build;
// Hugging Face folders and files: GPT-2, BERT, the Llama family.
const gpt2: LanguageModel = await lens.loadModel('models/gpt2/', { context: 256 });
const picked: LanguageModel = await loadModel([new File([], 'config.json')]);
const sharded: LanguageModel = await loadModel({ config: 'config.json', weights: ['a.safetensors', new Uint8Array(8)],
  tokenizer: { model: {} }, tokenizerConfig: '{}' });
const fills: FillMaskResult[] = gpt2.fillMask('Paris is the [MASK] of France.', { top: 5 });
const memory: LanguageModelMemory = sharded.memory();
const bytes: number = memory.weights + memory.kvCache + memory.scratch + gpt2.config.context + picked.config.typeVocab;
const arch: string = gpt2.config.architecture + gpt2.config.modelType + fills[0].candidates[0].token;
void [kind, seqLen, a, p, why, row, firstP, text, fromBytes, fromHf, bigSeed, build, bytes, arch];

// @ts-expect-error fillMask's option is top
gpt2.fillMask('a [MASK]', { k: 3 });

// @ts-expect-error temperature is a number
lm.generate('x', { temperature: 'hot' });
// @ts-expect-error run() takes text or ids
lm.run({ text: 'x' });
// @ts-expect-error unknown option
lm.generate('x', { tokens: 3 });
// @ts-expect-error the seed is a number or a bigint
lm.generate('x', { seed: '7' });
