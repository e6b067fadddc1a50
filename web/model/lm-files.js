// Where a language model's files come from, as readers that fetch each file only when the
// loader wants it (a File or a Node path by byte ranges, a URL streamed, so that one tensor at a
// time sits beside the weights).
//   file: bytes | URL | path (Node) / relative URL (page) | File / Blob
//   folder: a Node directory path, a URL ending '/', a FileList or an array of Files, holding
//     config.json, model.safetensors or model.safetensors.index.json (+ its shards), and
//     tokenizer.json (+ tokenizer_config.json) or a llama2.c tokenizer.bin.
// Nothing is fetched but what the caller names and the files of the folder it names.
import { isNode, nodeBuiltin } from '../engine/load.js';
import * as check from '../engine/validate.js';
import { blobRanges, openRanges, readBytes, toUrl } from './source.js';

export const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
export const isBlob = (v) => typeof Blob !== 'undefined' && v instanceof Blob;
const isFileList = (v) => typeof FileList !== 'undefined' && v instanceof FileList;
export const isPlainObject = (v) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !isBytes(v) && !(v instanceof URL) && !isBlob(v) && !isFileList(v);

const asBytes = (v) => (v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
const utf8 = new TextEncoder();

/**
 * A reader for one file: { name (for messages), key (a cache key or null), read(progress) →
 * Promise<Uint8Array>, sibling(fileName) → reader | null, and for files rather than bytes
 * open() → Promise<{ size, read(begin, end), close() }> (source.js openRanges) }.
 */
export function fileReader(value, name) {
  if (isBytes(value))
    return { name, key: null, sibling: () => null, read: async (progress) => (progress(value.byteLength, value.byteLength), asBytes(value)) };
  if (isBlob(value)) {
    const label = value.name ? `${name} (${value.name})` : name;
    return { name: label, key: null, sibling: () => null, open: async () => blobRanges(value),
      read: async (progress) => {
        const bytes = new Uint8Array(await value.arrayBuffer());
        progress(bytes.byteLength, bytes.byteLength);
        return bytes;
      } };
  }
  if (value instanceof URL || (typeof value === 'string' && value !== '')) {
    let url = null;
    const resolve = async () => (url ??= await toUrl(value));
    const label = value instanceof URL ? `${name} (${value.href})` : `${name} (${value})`;
    return {
      name: label,
      key: value instanceof URL ? value.href : `string:${value}`,
      read: async (progress) => {
        try {
          return await readBytes(await resolve(), progress);
        } catch (e) {
          e.message = `loadModel: ${name}: ${e.message}`;  // the message names the URL or path
          throw e;
        }
      },
      open: async () => opened(name, await resolve()),
      sibling: (file) => urlReader(async () => new URL(file, await resolve()), file),
    };
  }
  throw new TypeError(`${name} must be a URL, a non-empty path string, a File, an ArrayBuffer or a typed array (got ${check.describe(value)})`);
}

function urlReader(urlOf, name) {
  let url = null;
  return {
    name,
    key: null,
    read: async (progress) => {
      url ??= await urlOf();
      try {
        return await readBytes(url, progress);
      } catch (e) {
        e.message = `loadModel: ${name}: ${e.message}`;  // the message names the URL or path
        throw e;
      }
    },
    open: async () => opened(name, url ??= await urlOf()),
    sibling: (file) => urlReader(async () => new URL(file, url ?? (url = await urlOf())), file),
  };
}

async function opened(name, url) {
  try {
    return await openRanges(url);
  } catch (e) {
    e.message = `loadModel: ${name}: ${e.message}`;  // the message names the URL or path
    throw e;
  }
}

/** A JSON part: an object or JSON text as bytes, else a file reader. */
export function jsonReader(value, name) {
  if (isPlainObject(value) || (typeof value === 'string' && value.trimStart().startsWith('{'))) {
    const bytes = utf8.encode(typeof value === 'string' ? value : JSON.stringify(value));
    return { name, key: typeof value === 'string' ? null : null, sibling: () => null,
      read: async (progress) => (progress(bytes.byteLength, bytes.byteLength), bytes) };
  }
  return fileReader(value, name);
}

/** True when `source` is a FileList or a non-empty array of Files (a chosen or dropped folder). */
export function isFileSet(source) {
  return isFileList(source) || (Array.isArray(source) && source.length > 0 && source.every(isBlob));
}

/**
 * Whether a path or URL names a model folder: in Node a directory holding config.json; in a
 * page a same-origin URL ending '/' whose config.json answers (one HEAD request).
 */
export async function isModelFolder(source) {
  if (!(typeof source === 'string' || source instanceof URL) || source === '') return false;
  let url;
  try {
    url = await toUrl(source);
  } catch {
    return false;
  }
  if (url.protocol === 'file:') {
    if (!isNode) return false;
    const fs = await nodeBuiltin('fs');
    if (!fs.statSync(url, { throwIfNoEntry: false })?.isDirectory()) return false;
    return fs.statSync(new URL(`${url.href.replace(/\/?$/, '/')}config.json`), { throwIfNoEntry: false })?.isFile() ?? false;
  }
  if (!url.pathname.endsWith('/') || !/^https?:$/.test(url.protocol)) return false;
  if (globalThis.location?.origin && url.origin !== globalThis.location.origin) return false;
  try {
    const response = await fetch(new URL('config.json', url), { method: 'HEAD' });
    // Read the (empty) body: a response left unread is cancelled later, a failed request in the
    // browser's network log.
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

const FOLDER_FILES = ['config.json', 'model.safetensors', 'model.safetensors.index.json', 'tokenizer.json',
  'tokenizer_config.json', 'tokenizer.bin'];

/**
 * The parts of a model folder: { config, weights (reader of model.safetensors or of the index),
 * index (true when weights is the index), tokenizer, tokenizerConfig (or null), key }.
 */
export async function folderParts(source) {
  if (isFileList(source) || Array.isArray(source)) {
    const files = new Map();
    for (const f of Array.from(source)) {
      if (!isBlob(f)) throw new TypeError(`loadModel: a list of files must hold File objects (got ${check.describe(f)})`);
      files.set(f.name, f);
    }
    const reader = (n) => {
      const f = files.get(n);
      if (!f) return null;
      const r = fileReader(f, n);
      r.name = n;
      r.sibling = (other) => (files.has(other) ? Object.assign(fileReader(files.get(other), other), { name: other }) : null);
      return r;
    };
    return partsOf(reader, 'the files given', null, undefined, [...files.keys()]);
  }
  let base = await toUrl(source);
  if (!base.pathname.endsWith('/')) base = new URL(`${base.href}/`);
  const exists = async (n) => {
    if (base.protocol !== 'file:') return null;  // a page cannot list a folder: files are tried
    const fs = await nodeBuiltin('fs');
    return fs.statSync(new URL(n, base), { throwIfNoEntry: false })?.isFile() ?? false;
  };
  const present = new Map();
  for (const n of FOLDER_FILES) present.set(n, await exists(n));
  const reader = (n) => (present.get(n) === false ? null : urlReader(async () => new URL(n, base), n));
  const listing = base.protocol === 'file:' ? (await nodeBuiltin('fs')).readdirSync(base) : undefined;
  return partsOf(reader, base.href, base.href, present, listing);
}

// `available`: the folder's file names where they can be listed (Node, a FileList), else undefined.
function partsOf(reader, where, key, present, available) {
  const config = reader('config.json');
  if (!config) throw new TypeError(`loadModel: ${where} has no config.json (a Hugging Face model folder holds config.json, model.safetensors and tokenizer.json)`);
  // In a page nothing can be listed: model.safetensors is tried first, then the index.
  const unknown = present === undefined || present.get('model.safetensors') === null;
  let weights = reader('model.safetensors');
  let index = false;
  if (!weights || (!unknown && present.get('model.safetensors') === false)) {
    weights = reader('model.safetensors.index.json');
    index = true;
  }
  if (!weights) throw new TypeError(`loadModel: ${where} has neither model.safetensors nor model.safetensors.index.json`);
  const tokenizer = reader('tokenizer.json') ?? reader('tokenizer.bin');
  if (!tokenizer) throw new TypeError(`loadModel: ${where} has no tokenizer.json (nor a llama2.c tokenizer.bin)`);
  return { config, weights, index, fallbackIndex: unknown ? reader('model.safetensors.index.json') : null, tokenizer,
    tokenizerConfig: tokenizer.name === 'tokenizer.json' || tokenizer.name.startsWith('tokenizer.json') ? reader('tokenizer_config.json') : null,
    optionalTokenizerConfig: true, key, available };
}
