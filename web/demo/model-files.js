// The files of a model folder as the reader gives them: chosen with a file input (a folder, or
// several files) or dropped (a folder, or files). Only names matter to lens.loadModel (it finds
// config.json, model.safetensors, tokenizer.json … among them), so a folder's own files are
// kept and its subfolders skipped. Nothing is read here: the loader reads the files it needs.

/** The Files of a drop: a dropped folder's files, or the dropped files themselves. */
export async function droppedFiles(dataTransfer) {
  const entries = [...(dataTransfer.items ?? [])]
    .filter((item) => item.kind === 'file')
    .map((item) => item.webkitGetAsEntry?.() ?? null);
  // A browser without entries (or files a script put in the DataTransfer) gives plain files.
  if (entries.length === 0 || entries.some((entry) => entry === null)) return [...dataTransfer.files];
  const files = [];
  for (const entry of entries) {
    if (entry.isFile) files.push(await fileOf(entry));
    else if (entry.isDirectory) for (const child of await childrenOf(entry)) if (child.isFile) files.push(await fileOf(child));
  }
  return files;
}

/** The Files of an <input type="file">, those of the chosen folder itself (not of its subfolders). */
export function chosenFiles(input) {
  const files = [...(input.files ?? [])];
  const depth = (f) => (f.webkitRelativePath || f.name).split('/').length;
  const top = Math.min(...files.map(depth));
  return files.filter((f) => depth(f) === top);
}

const fileOf = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject));

// readEntries gives a directory's entries in batches, until an empty one.
async function childrenOf(directory) {
  const reader = directory.createReader(), out = [];
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return out;
    out.push(...batch);
  }
}
