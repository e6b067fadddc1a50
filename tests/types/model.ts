// The model add-on, `attnlens/model` (also reached as lens.loadModel()).
import { loadModel, MAX_TEXT_LENGTH, ModelFormatError } from 'attnlens/model';
import type { ModelResult, UseLiteModel } from 'attnlens/model';
import { init } from 'attnlens';

const model: UseLiteModel = await loadModel(undefined, { onProgress: ({ stage, loaded, total }) => void [stage, loaded, total] });
const viaLens: UseLiteModel = await (await init()).loadModel(new URL('https://127.0.0.1/use-lite.bin'));
const run: ModelResult = model.run('The cat sat on the mat.');
const attention: Float32Array = run.layers[0].attention;
const embedding: Float32Array = run.embedding;
const tokens: string[] = model.tokenize('hello').tokens;
const maxLength: number = MAX_TEXT_LENGTH;
const layers: number = model.info.layers;
const isFormatError = (e: unknown) => e instanceof ModelFormatError;

// @ts-expect-error a number is not a model source
loadModel(42);
// @ts-expect-error run takes text
model.run(['The', 'cat']);
// @ts-expect-error the progress stages are named
loadModel(undefined, { onProgress: (p) => { const s: 'fetch' = p.stage; } });

export { viaLens, attention, embedding, tokens, maxLength, layers, isFormatError };
