// A sharded checkpoint's model.safetensors.index.json: which shard file holds each tensor.
// Read strictly, because its file names become paths and URLs beside the index: each must be a
// plain `.safetensors` file name (no folder, no `..`), a tensor is named once, and numbered
// shards (model-00001-of-00003.safetensors) are all there. Errors are ModelFormatError naming
// the index.
//   const index = parseShardIndex(text, { name: 'models/llama/model.safetensors.index.json' });
//   index.files;                          // shard file names, in shard order
//   index.checkShard(file, headerNames);  // a shard's tensors are exactly those mapped to it
import * as check from '../engine/validate.js';
import { ModelFormatError } from './pack.js';

const NUMBERED = /-(\d+)-of-(\d+)\.safetensors$/;

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isBytes(v);

/**
 * The keys of the top-level "weight_map" object of `text`, in order, duplicates kept (JSON.parse
 * keeps only the last of a repeated key). `text` is valid JSON (JSON.parse accepted it).
 */
function weightMapKeys(text) {
  let at = 0;
  const space = () => { while (at < text.length && ' \t\n\r'.includes(text[at])) at++; };
  const string = () => {
    const start = at;
    for (at++; text[at] !== '"'; at++) if (text[at] === '\\') at++;
    at++;
    return JSON.parse(text.slice(start, at));
  };
  const skipValue = () => {
    space();
    const c = text[at];
    if (c === '"') return void string();
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      at++;
      space();
      if (text[at] === close) return void at++;
      for (;;) {
        if (c === '{') { space(); string(); space(); at++; /* : */ }
        skipValue();
        space();
        if (text[at++] === close) return undefined;  // else ','
      }
    }
    while (at < text.length && !',]} \t\n\r'.includes(text[at])) at++;  // number, true, false, null
    return undefined;
  };
  space();
  at++;  // the top-level '{' (the caller checked that it is an object)
  space();
  let keys = null;
  while (text[at] === '"') {
    const key = string();
    space();
    at++;  // :
    space();
    if (key === 'weight_map' && text[at] === '{') {
      keys = [];
      at++;
      space();
      while (text[at] === '"') {
        keys.push(string());
        space();
        at++;
        skipValue();
        space();
        if (text[at] === ',') at++;
        space();
      }
      at++;  // }
    } else skipValue();
    space();
    if (text[at] === ',') at++;
    space();
  }
  return keys;
}

/**
 * Reads model.safetensors.index.json (`index`: object, JSON text or UTF-8 bytes; `name` the file
 * name or URL errors give; `available`, optional: the file names present beside it, e.g. a
 * folder listing, each shard must be one of them). Returns { files, weightMap, totalSize,
 * tensorsIn(file), checkShard(file, names) }.
 */
export function parseShardIndex(index, { name = 'model.safetensors.index.json', available } = {}) {
  if (typeof name !== 'string' || name === '') throw new TypeError(`parseShardIndex() name must be a non-empty string (got ${check.describe(name)})`);
  if (available !== undefined && !(Array.isArray(available) && available.every((f) => typeof f === 'string')))
    throw new TypeError(`parseShardIndex() available must be an array of file names (got ${check.describe(available)})`);
  const fail = (message) => { throw new ModelFormatError(`${name}: ${message}`); };
  let json = index;
  let keys = null;
  if (isBytes(index)) {
    index = new TextDecoder().decode(index instanceof ArrayBuffer ? new Uint8Array(index)
      : new Uint8Array(index.buffer, index.byteOffset, index.byteLength));
  }
  if (typeof index === 'string') {
    const text = index.charCodeAt(0) === 0xfeff ? index.slice(1) : index;
    try {
      json = JSON.parse(text);
    } catch (e) {
      fail(`not valid JSON (${e.message})`);
    }
    if (isPlainObject(json)) keys = weightMapKeys(text);
  } else if (!isPlainObject(index)) {
    throw new TypeError(`parseShardIndex() index must be model.safetensors.index.json as an object, JSON text or bytes (got ${check.describe(index)})`);
  }
  if (!isPlainObject(json)) fail(`not a model.safetensors.index.json: the JSON is ${check.describe(json)}, not an object`);
  const map = json.weight_map;
  if (!isPlainObject(map))
    fail(`not a model.safetensors.index.json: it has no "weight_map" object${Object.hasOwn(json, 'model_type') ? ' (this looks like a config.json)' : ''}`);
  if (keys !== null) {
    const seen = new Set();
    for (const k of keys) {
      if (seen.has(k)) fail(`weight_map names the tensor ${JSON.stringify(k.slice(0, 80))} twice`);
      seen.add(k);
    }
  }
  const entries = Object.entries(map);
  if (entries.length === 0) fail('weight_map is empty');

  const weightMap = new Map();
  const files = [];
  for (const [tensor, file] of entries) {
    if (tensor === '') fail('weight_map has a tensor with an empty name');
    if (typeof file !== 'string') fail(`weight_map[${JSON.stringify(tensor.slice(0, 80))}] is ${check.describe(file)}, not a file name`);
    if (!files.includes(file)) {  // each file name checked once
      if (file === '' || /[/\\\0]/.test(file) || file.includes('..'))
        fail(`weight_map[${JSON.stringify(tensor.slice(0, 80))}] is ${JSON.stringify(file.slice(0, 80))}: a shard must be a plain file name beside the index (no folder, no "..")`);
      if (!file.endsWith('.safetensors'))
        fail(`weight_map[${JSON.stringify(tensor.slice(0, 80))}] is ${JSON.stringify(file.slice(0, 80))}: only .safetensors shards are read`);
      files.push(file);
    }
    weightMap.set(tensor, file);
  }

  // Numbered shards (the Hub's model-00001-of-00003.safetensors): all of one count, each number
  // once, none missing; they are listed in number order. Other names: in name order.
  const numbers = files.map((f) => f.match(NUMBERED));
  if (numbers.every(Boolean)) {
    const counts = new Set(numbers.map((m) => Number(m[2])));
    if (counts.size !== 1) fail(`the shards disagree on how many there are: ${files.slice(0, 4).join(', ')}`);
    const [count] = counts;
    const got = numbers.map((m) => Number(m[1])).sort((a, b) => a - b);
    if (files.length !== count || got.some((n, i) => n !== i + 1)) {
      const missing = Array.from({ length: count }, (_, i) => i + 1).filter((n) => !got.includes(n));
      fail(`the shards are numbered 1 to ${count}, but weight_map names ${files.length}` +
        (missing.length ? ` (no tensor is in shard ${missing.slice(0, 5).join(', ')})` : ' (a number is out of range or repeated)'));
    }
    files.sort((a, b) => Number(a.match(NUMBERED)[1]) - Number(b.match(NUMBERED)[1]));
  } else {
    files.sort();
  }
  if (available !== undefined)
    for (const f of files) if (!available.includes(f)) fail(`the shard ${f} is not there (beside the index: ${available.slice(0, 8).join(', ') || 'nothing'})`);

  let totalSize = null;
  const metadata = json.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isPlainObject(metadata)) fail('metadata must be an object');
    if (metadata.total_size !== undefined) {
      if (!Number.isSafeInteger(metadata.total_size) || metadata.total_size < 0)
        fail(`metadata.total_size is ${check.describe(metadata.total_size)}, not a byte count`);
      totalSize = metadata.total_size;
    }
  }

  const tensorsIn = (file) => [...weightMap].filter(([, f]) => f === file).map(([t]) => t);
  return Object.freeze({
    files: Object.freeze(files),
    weightMap,
    totalSize,
    /** The tensors weight_map puts in `file`. */
    tensorsIn,
    /** Throws ModelFormatError unless `names` (a shard's header) are exactly the tensors mapped to `file`. */
    checkShard(file, names) {
      if (typeof file !== 'string' || !Array.isArray(names)) throw new TypeError('checkShard(file, names) takes a file name and an array of tensor names');
      if (!files.includes(file)) fail(`no tensor is mapped to ${JSON.stringify(file.slice(0, 80))}`);
      const want = new Set(tensorsIn(file));
      const extra = names.filter((n) => weightMap.get(n) !== file);
      if (extra.length) {
        const other = weightMap.get(extra[0]);
        fail(`the shard ${file} holds ${JSON.stringify(String(extra[0]).slice(0, 80))}, which weight_map ${other ? `puts in ${other}` : 'does not name'}`);
      }
      const have = new Set(names);
      const missing = [...want].filter((n) => !have.has(n));
      if (missing.length) fail(`the shard ${file} lacks ${missing.length} tensor(s) weight_map puts there, e.g. ${JSON.stringify(missing[0].slice(0, 80))}`);
    },
  });
}
