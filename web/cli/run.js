// `attnlens run MODEL_FOLDER "text"`: a Hugging Face model folder (GPT-2, BERT, DistilBERT, the
// Llama family), or the bundled stories260K, run by the engine on a text, written as the figures'
// JSON, which `attnlens render` and the elements' `data` take: tokens (as the figures label them),
// every layer's and head's attention [layers][heads][n][n], causal for a decoder; `generate` adds
// the generation steps (each new token, where it looked per layer and head, the candidates).
// Errors name the argument that is wrong.
import { statSync } from 'node:fs';
import path from 'node:path';

import { init } from '../attnlens.js';
import { tokenLabel } from '../elements/lib/tokens.js';

/** A bad MODEL_FOLDER, text or option (as opposed to a failure of the engine). */
export class RunArgumentError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RunArgumentError';
  }
}

const FOLDER_HELP = 'a Hugging Face model folder: config.json, model.safetensors (or its shards and model.safetensors.index.json), tokenizer.json';

// The bundled model is named, not a folder.
const BUNDLED = 'stories260K';

function checkFolder(folder) {
  if (folder === BUNDLED) return;
  if (typeof folder !== 'string' || folder === '') throw new RunArgumentError(`MODEL_FOLDER is missing: give ${FOLDER_HELP}`);
  const stat = statSync(folder, { throwIfNoEntry: false });
  if (!stat) throw new RunArgumentError(`MODEL_FOLDER ${folder}: no such folder`);
  if (!stat.isDirectory()) throw new RunArgumentError(`MODEL_FOLDER ${folder} is a file, not a folder: give ${FOLDER_HELP}`);
  if (!statSync(path.join(folder, 'config.json'), { throwIfNoEntry: false })?.isFile())
    throw new RunArgumentError(`MODEL_FOLDER ${folder} has no config.json: give ${FOLDER_HELP}`);
}

// [heads·rows·cols] flat → [heads][rows][cols], the nested lists JSON figures read.
function nested(flat, heads, rows, cols) {
  return Array.from({ length: heads }, (_, h) => Array.from({ length: rows }, (_, i) =>
    Array.from(flat.subarray((h * rows + i) * cols, (h * rows + i + 1) * cols))));
}

const describeLoaded = (lm, folder, text) => {
  const { architecture, modelType, layers, heads, vocabSize, context } = lm.config;
  return { folder: folder === BUNDLED ? BUNDLED : path.basename(path.resolve(folder)), architecture, modelType, kind: lm.kind, layers, heads, vocabSize, context, text };
};

/**
 * The figures' JSON for `text` through the model in `folder`. `options`: generate (new tokens,
 * causal LMs only), temperature (default 0: greedy), seed (default 1), lens (an engine to reuse).
 */
export async function runModelFolder(folder, text, { generate, temperature = 0, seed = 1, lens } = {}) {
  checkFolder(folder);
  if (typeof text !== 'string' || text === '') throw new RunArgumentError('TEXT is missing or empty: give the text to run the model on');
  if (generate !== undefined && (!Number.isInteger(generate) || generate < 1))
    throw new RunArgumentError(`--generate must be a whole number of tokens ≥ 1 (got ${generate})`);
  if (!Number.isFinite(temperature) || temperature < 0) throw new RunArgumentError(`--temperature must be a number ≥ 0 (got ${temperature})`);
  if (!Number.isInteger(seed) || seed < 0) throw new RunArgumentError(`--seed must be a whole number ≥ 0 (got ${seed})`);
  const engine = lens ?? await init();
  let lm;
  try {
    lm = await engine.loadModel(folder === BUNDLED ? BUNDLED : path.resolve(folder));
  } catch (error) {
    error.message = `MODEL_FOLDER ${folder}: ${error.message}`;
    throw error;
  }
  if (generate !== undefined && lm.kind !== 'causal-lm')
    throw new RunArgumentError(`--generate: ${folder} holds a ${lm.kind} (${lm.config.architecture}); only causal LMs (GPT-2, the Llama family) write`);
  let run;
  try {
    run = lm.run(text);
  } catch (error) {
    throw new RunArgumentError(`TEXT: ${error.message}`);
  }
  const n = run.tokens.length, heads = lm.config.heads;
  const data = {
    tokens: run.tokens.map(tokenLabel),
    attention: run.layers.map((layer) => nested(layer.attention, heads, n, n)),
    causal: lm.kind === 'causal-lm',
    ids: Array.from(run.ids),
    pieces: run.tokens,
    about: describeLoaded(lm, folder, text),
  };
  if (generate !== undefined) {
    const g = lm.generate(text, { steps: generate, temperature, seed });
    data.generation = {
      text: g.text, stopped: g.stopped, seed: Number(g.seed), temperature, ids: Array.from(g.ids), tokens: g.tokens,
      // Step s: the token written after position `position`, and that position's attention row
      // over the tokens up to it, per layer [heads][position + 1].
      steps: g.steps.map((step) => ({
        id: step.id, token: step.token, position: step.position,
        attention: step.attention.map((row) => nested(row, heads, 1, step.position + 1).map((h) => h[0])),
        candidates: step.candidates.map(({ id, token, p }) => ({ id, token, p })),
      })),
    };
  }
  return data;
}
