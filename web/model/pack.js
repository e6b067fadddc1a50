// Packs the TF.js artifacts of Universal Sentence Encoder lite (model.json, its weight shards,
// vocab.json) into our model file: the tensors the C++ forward pass reads, under short names,
// plus the scored vocabulary, in one checksummed buffer. Pure JavaScript (no Node or DOM APIs):
// scripts/model/pack.mjs runs it at build time and loadModel() at run time.
//
// Layout (little-endian; cpp/src/model/model_file.cpp reads it):
//   0 "ATNLMODL" · 8 u32 version 1 · 12 u32 CRC-32 of bytes [16, end) · 16 u32 file size ·
//   20 u32 tensor count T · 24 u32 vocabulary size V · 28 u32 vocabulary text bytes B ·
//   32 T records of 64 bytes: name[40], u32 rank, u32 dims[4], u32 data offset (16-aligned) ·
//   f64 scores[V] · u32 piece_bytes[V] · UTF-8 pieces (B bytes) · float32 tensor data.

const ENCODE = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';
const STACK = `${ENCODE}TransformerStack/`;
const WEIGHTS = 'module/Encoder_en/KonaTransformer/Encode/';

function layerTensors(l) {
  const own = `${ENCODE}Layer_${l}/TransformerLayer/`;
  const run = `${STACK}Layer_${l}/TransformerLayer/`;
  const kernel = `${WEIGHTS}Layer_${l}/TransformerLayer/MultiheadAttention/`;
  const t = {
    [`l${l}.ln1.scale`]: `${own}layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`,
    [`l${l}.ln1.bias`]: `${own}layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`,
    [`l${l}.qkv.w`]: `${kernel}qkv_transform_single/kernel/part_0`,
    [`l${l}.qkv.b`]: `${own}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`,
    [`l${l}.q.scale`]: `${run}MultiheadAttention/mul/y`,
    [`l${l}.out.w`]: `${kernel}output_transform_single/kernel/part_0`,
    [`l${l}.out.b`]: `${own}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`,
    [`l${l}.ln2.scale`]: `${own}FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`,
    [`l${l}.ln2.bias`]: `${own}FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`,
    [`l${l}.ffn1.w`]: `${run}FFN/conv1/Tensordot/Reshape_1`,
    [`l${l}.ffn1.b`]: `${own}FFN/conv1/bias/ConcatPartitions/concat`,
    [`l${l}.ffn2.w`]: `${run}FFN/conv2/Tensordot/Reshape_1`,
    [`l${l}.ffn2.b`]: `${own}FFN/conv2/bias/ConcatPartitions/concat`,
  };
  if (l === 0) {  // the projected residual of layer 0 (AdjustResidualInput)
    t['l0.res.w'] = `${own}dense/kernel/ConcatPartitions/concat`;
    t['l0.res.b'] = `${own}dense/bias/ConcatPartitions/concat`;
  }
  return t;
}

/** Our tensor name → the TF.js weight it comes from. Leading 1-dimensions are dropped. */
export const TENSOR_SOURCES = {
  embed: 'module/Embeddings_en',
  'timing.inv': `${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`,
  // One ε constant feeds all four layer norms of the graph.
  'ln.eps': `${STACK}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`,
  'l2.eps': 'module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y',
  ...layerTensors(0),
  ...layerTensors(1),
  'pool.w': 'module/Encoder_en/hidden_layers/tanh_layer_0/weights',
  'pool.b': 'module/Encoder_en/hidden_layers/tanh_layer_0/bias',
};

const DTYPE_BYTES = { float32: 4, int32: 4, bool: 1, uint8: 1, float16: 2, complex64: 8 };
const MAGIC = 'ATNLMODL';
const VERSION = 1;
const RECORD_BYTES = 64;
const NAME_BYTES = 40;

export class ModelFormatError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ModelFormatError';
  }
}

const fail = (message) => { throw new ModelFormatError(message); };

function asBytes(buffer, what) {
  if (buffer instanceof Uint8Array) return buffer;
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  if (ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  return fail(`${what} must be an ArrayBuffer or a typed array`);
}

function parseJson(value, what) {
  if (typeof value === 'string') {
    try {
      return JSON.parse(value);
    } catch (e) {
      return fail(`${what} is not valid JSON (${e.message})`);
    }
  }
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value))
    return parseJson(new TextDecoder().decode(asBytes(value, what)), what);
  return value;
}

/**
 * Finds every weight of a TF.js model.json manifest in its concatenated shard bytes.
 * Returns Map(name → { dtype, shape, offset, bytes }), offsets into the concatenation of all
 * groups' shards in manifest order.
 */
export function weightTable(modelJson) {
  const manifest = modelJson?.weightsManifest;
  if (!Array.isArray(manifest)) fail('model.json has no weightsManifest: is it a TF.js GraphModel?');
  const table = new Map();
  let offset = 0;
  const paths = [];
  for (const group of manifest) {
    if (!Array.isArray(group?.paths) || !Array.isArray(group?.weights))
      fail('model.json has a malformed weightsManifest group');
    paths.push(...group.paths);
    for (const w of group.weights) {
      const bytesPer = DTYPE_BYTES[w.dtype];
      if (!bytesPer || w.quantization)
        fail(`weight ${w.name} is ${w.quantization ? 'quantized' : w.dtype}: only unquantized numeric weights are supported`);
      if (!Array.isArray(w.shape) || !w.shape.every((d) => Number.isInteger(d) && d >= 0))
        fail(`weight ${w.name} has a malformed shape`);
      const bytes = w.shape.reduce((a, b) => a * b, 1) * bytesPer;
      table.set(w.name, { dtype: w.dtype, shape: w.shape, offset, bytes });
      offset += bytes;
    }
  }
  return { table, paths, totalBytes: offset };
}

/** The shards as byte arrays, checked against the manifest's total. */
function shardList(shards, totalBytes) {
  const list = (Array.isArray(shards) ? shards : [shards]).map((s, i) => asBytes(s, `weight shard ${i + 1}`));
  const got = list.reduce((a, s) => a + s.byteLength, 0);
  if (got < totalBytes)
    fail(`the weight shards are truncated: ${got} bytes, model.json describes ${totalBytes}`);
  if (got > totalBytes)
    fail(`the weight shards hold ${got} bytes, more than the ${totalBytes} model.json describes`);
  return list;
}

/** Copies bytes [from, from + length) of the shards' concatenation to out[at...]. */
function copyFromShards(list, from, length, out, at) {
  let start = 0;
  for (const shard of list) {
    const end = start + shard.byteLength;
    if (length > 0 && from < end) {
      const take = Math.min(end - from, length);
      out.set(shard.subarray(from - start, from - start + take), at);
      at += take;
      from += take;
      length -= take;
    }
    start = end;
  }
}

/** [piece, score] pairs. A null score (seven pieces with ':' have one) counts as 0, as it does
 *  in the reference tokenizer's arithmetic (null + x === x). */
function checkVocab(vocab) {
  if (!Array.isArray(vocab) || vocab.length === 0) fail('vocab.json must be a non-empty array of [piece, score]');
  return vocab.map((e, i) => {
    if (!Array.isArray(e) || typeof e[0] !== 'string' || !(e[1] === null || Number.isFinite(e[1])))
      fail(`vocab.json entry ${i} is not [piece, finite score]`);
    return [e[0], e[1] ?? 0];
  });
}

let crcTable;
/** CRC-32 (zlib polynomial) of `bytes`. */
export function crc32(bytes) {
  if (!crcTable) {
    crcTable = new Int32Array(256 * 4);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
      crcTable[i] = c;
    }
    for (let s = 1; s < 4; s++)
      for (let i = 0; i < 256; i++) {
        const p = crcTable[(s - 1) * 256 + i];
        crcTable[s * 256 + i] = (p >>> 8) ^ crcTable[p & 0xff];
      }
  }
  const t = crcTable;
  let crc = -1;
  let i = 0;
  const n = bytes.length;
  // Slicing-by-4: one table lookup per byte but four bytes per step.
  for (; i + 4 <= n; i += 4) {
    crc ^= bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    crc = t[768 + (crc & 0xff)] ^ t[512 + ((crc >>> 8) & 0xff)] ^ t[256 + ((crc >>> 16) & 0xff)] ^ t[crc >>> 24];
  }
  for (; i < n; i++) crc = t[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

const align16 = (n) => Math.ceil(n / 16) * 16;

/**
 * Our model file from TF.js artifacts: `modelJson` (object, string or bytes), `shards` (the
 * weight files in manifest order, or their concatenation), `vocab` (array, string or bytes).
 * Throws ModelFormatError naming what is missing or malformed.
 */
export function packModel({ modelJson, shards, vocab }) {
  const model = parseJson(modelJson, 'model.json');
  const pieces = checkVocab(parseJson(vocab, 'vocab.json'));
  const { table, totalBytes } = weightTable(model);
  const list = shardList(shards, totalBytes);

  // Values are checked (finite) by the engine when it loads the file.
  const tensors = Object.entries(TENSOR_SOURCES).map(([name, source]) => {
    const w = table.get(source);
    if (!w) fail(`model.json has no weight ${source} (our '${name}'): is this Universal Sentence Encoder lite?`);
    if (w.dtype !== 'float32') fail(`weight ${source} is ${w.dtype}, expected float32`);
    let shape = w.shape.slice();
    while (shape.length > 1 && shape[0] === 1) shape.shift();
    if (shape.length === 0) shape = [1];
    if (shape.length > 4) fail(`weight ${source} has rank ${shape.length}`);
    return { name, shape, from: w.offset, bytes: w.bytes };
  });

  const encoder = new TextEncoder();
  const pieceBytes = pieces.map(([p]) => encoder.encode(p));
  const textBytes = pieceBytes.reduce((a, p) => a + p.byteLength, 0);
  const scoresAt = 32 + tensors.length * RECORD_BYTES;
  const lengthsAt = scoresAt + 8 * pieces.length;
  const textAt = lengthsAt + 4 * pieces.length;
  let at = textAt + textBytes;
  for (const t of tensors) {
    t.offset = align16(at);
    at = t.offset + t.bytes;
  }
  const size = at;
  if (size >= 2 ** 32) fail('the model is too large for the file format');

  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  for (let i = 0; i < MAGIC.length; i++) out[i] = MAGIC.charCodeAt(i);
  view.setUint32(8, VERSION, true);
  view.setUint32(16, size, true);
  view.setUint32(20, tensors.length, true);
  view.setUint32(24, pieces.length, true);
  view.setUint32(28, textBytes, true);
  tensors.forEach((t, i) => {
    const r = 32 + i * RECORD_BYTES;
    const name = encoder.encode(t.name);
    if (name.length >= NAME_BYTES) fail(`tensor name ${t.name} is too long`);
    out.set(name, r);
    view.setUint32(r + 40, t.shape.length, true);
    t.shape.forEach((d, k) => view.setUint32(r + 44 + 4 * k, d, true));
    view.setUint32(r + 60, t.offset, true);
    copyFromShards(list, t.from, t.bytes, out, t.offset);
  });
  let text = textAt;
  pieces.forEach(([, score], i) => {
    view.setFloat64(scoresAt + 8 * i, score, true);
    view.setUint32(lengthsAt + 4 * i, pieceBytes[i].byteLength, true);
    out.set(pieceBytes[i], text);
    text += pieceBytes[i].byteLength;
  });
  view.setUint32(12, crc32(out.subarray(16)), true);
  return out;
}

/** True when `bytes` start with our model file's signature. */
export function isModelFile(bytes) {
  const b = asBytes(bytes, 'model');
  if (b.length < MAGIC.length) return false;
  for (let i = 0; i < MAGIC.length; i++) if (b[i] !== MAGIC.charCodeAt(i)) return false;
  return true;
}
