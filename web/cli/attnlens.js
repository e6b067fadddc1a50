#!/usr/bin/env node
// The attnlens command line (Node ≥ 20, no browser):
//   attnlens render data.json --figure heatmap --format svg -o out.svg
//   attnlens run MODEL_FOLDER "text" -o run.json [--generate N]   (the figures' JSON of a model)
//   attnlens serve folder/          (static, offline, COOP/COEP headers)
//   attnlens python > attnlens_nb.py (the Jupyter helper)
// Exit codes: 0 done, 1 bad data or failure, 2 bad usage.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { OWN_OPTIONS } from './figures.js';
import { DataError, FORMATS, OptionError, figureNames, render } from './render.js';
import { STATE } from '../elements/lib/state.js';

const USAGE = `usage:
  attnlens render <data.json | -> [options]   render a figure (SVG to stdout unless -o)
  attnlens run MODEL_FOLDER TEXT [options]     run a model on TEXT: the figures' JSON (stdout unless -o)
  attnlens serve [folder] [--port N]          serve a folder offline (default: .)
  attnlens python                             print the Python/Jupyter helper (attnlens_nb.py)
  attnlens help

run options (MODEL_FOLDER: a Hugging Face folder, config.json + model.safetensors
or its shards + tokenizer.json; GPT-2, BERT, DistilBERT, Llama, Mistral, Qwen2; or stories260K):
  -o, --output FILE write the JSON there (default: standard output); render draws it
  --generate N      causal LMs: also write N tokens and each step's attention and candidates
  --temperature T   sampling temperature of --generate (default 0: the most probable token)
  --seed S          the sampler's seed (default 1)

render options:
  --figure NAME     FIGURES (default heatmap)
  --format F        svg | html | png (default: from -o's extension, else svg)
  -o, --output FILE write there (default: standard output)
  --theme T         light | dark (svg/png default light; html default: the reader's)
  --width PX        the figure's width (svg/png: the picture's, it scales; html: in the page)
  --pixel-ratio R   PNG pixels per SVG unit (default 2)
  --title TEXT      the HTML document's title
  state:            --layer N --head N --query N|TOKEN --step S --scale auto|none|X
                    --temperature T --mask none|causal|padding|"causal padding"
                    --color-scale linear|sqrt|log|row|max (how weights map to colours)
                    --hide "TOKEN|N …" --renormalize [true|false]
                    (negative numbers as values: --query -1)
  lines:            --heads all|"N …" --key N|TOKEN --threshold W
  text:             --direction to|from`;

// No V8 flag is set here (the library never flips them): the engine runs the build this Node
// validates, SIMD128 on Node 20 (the build of the standalone HTML files and of Safari), or
// relaxed SIMD (Chromium's) when node itself runs with --experimental-wasm-relaxed-simd.

class UsageError extends Error {}

// Picture formats an author may reach for by the output's extension but that are not made here.
const OTHER_IMAGES = new Set(['jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'tif', 'tiff', 'pdf', 'eps', 'ps']);

/**
 * The arguments as parseArgs takes them: a negative number after an option is its value
 * (`--query -1`, not an unknown option), and `--renormalize` alone is a switch, as the attribute.
 */
function normalizeArgs(args, valued) {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i], next = args[i + 1];
    if (valued.has(arg) && next !== undefined && /^-(\d|\.\d|Infinity$)/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else if (arg === '--renormalize' && !['true', 'false', ''].includes(next)) {
      out.push('--renormalize=true');
    } else {
      out.push(arg);
    }
  }
  return out;
}

const usage = async () => USAGE.replace('FIGURES', (await figureNames()).join(' | '));

async function readInput(file) {
  let text;
  try {
    text = file === '-' ? await new Response(process.stdin).text() : await readFile(file, 'utf8');
  } catch (error) {
    const why = { EISDIR: 'it is a folder, not a data file', EACCES: 'permission denied' }[error.code] ?? error.message;
    throw new DataError(error.code === 'ENOENT' ? `${file}: no such file` : `cannot read ${file}: ${why}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // Python's json.dump writes non-finite floats as NaN / Infinity, which JSON does not have.
    const hint = /(^|[\s,[:])(NaN|-?Infinity)([\s,\]}]|$)/.test(text) ? ' (NaN and Infinity are not JSON: the weights have non-finite numbers)' : '';
    throw new DataError(`${file === '-' ? 'standard input' : file} is not valid JSON: ${error.message}${hint}`);
  }
}

async function renderCommand(args) {
  const stateOptions = Object.fromEntries([...Object.keys(STATE), ...OWN_OPTIONS].map((name) => [name, { type: 'string' }]));
  const known = {
    ...stateOptions,
    figure: { type: 'string' }, format: { type: 'string' }, output: { type: 'string', short: 'o' },
    theme: { type: 'string' }, width: { type: 'string' }, 'pixel-ratio': { type: 'string' }, title: { type: 'string' },
  };
  const { values, positionals } = parseArgs({
    args: normalizeArgs(args, new Set(Object.keys(known).map((name) => `--${name}`))), allowPositionals: true, strict: true, options: known,
  });
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `render takes one data file (got ${positionals.join(' ')})` : 'render needs a data file (or - for standard input)');
  const { output, 'pixel-ratio': pixelRatio, ...options } = values;
  const ext = output && path.extname(output).slice(1).toLowerCase();
  if (options.format === undefined && OTHER_IMAGES.has(ext))
    throw new UsageError(`cannot write ${output}: .${ext} is not a format made here (${FORMATS.join(', ')}); give --format to write one of them anyway`);
  options.format ??= FORMATS.includes(ext) ? ext : 'svg';
  if (pixelRatio !== undefined) options.pixelRatio = pixelRatio;
  const input = await readInput(positionals[0]);
  const out = await render(input, options).catch((error) => {
    if (error instanceof DataError) error.message = `${positionals[0] === '-' ? 'standard input' : positionals[0]}: ${error.message}`;
    throw error;
  });
  if (!output) return void process.stdout.write(out);
  await writeOutput(output, out);
}

// A whole number option: '12' → 12, anything else is the option's error.
function wholeNumber(name, value) {
  if (value === undefined) return undefined;
  if (!/^\s*\d+\s*$/.test(value)) throw new UsageError(`${name} must be a whole number (got ${JSON.stringify(value)})`);
  return Number(value);
}

async function runCommand(args) {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, strict: true,
    options: { output: { type: 'string', short: 'o' }, generate: { type: 'string' }, temperature: { type: 'string' }, seed: { type: 'string' } },
  });
  if (positionals.length !== 2)
    throw new UsageError(positionals.length < 2 ? 'run needs MODEL_FOLDER and TEXT (quote the text)' : `run takes MODEL_FOLDER and one TEXT (got ${positionals.length} arguments: quote the text)`);
  let temperature;
  if (values.temperature !== undefined) {
    temperature = Number(values.temperature);
    if (values.temperature.trim() === '' || !Number.isFinite(temperature) || temperature < 0)
      throw new UsageError(`--temperature must be a number ≥ 0 (got ${JSON.stringify(values.temperature)})`);
  }
  const { runModelFolder } = await import('./run.js');
  // A bad folder or text exits 1 with its message (as bad data does for render).
  const data = await runModelFolder(positionals[0], positionals[1], {
    generate: wholeNumber('--generate', values.generate), temperature, seed: wholeNumber('--seed', values.seed),
  });
  const json = `${JSON.stringify(data)}\n`;
  if (!values.output) return void process.stdout.write(json);
  await writeOutput(values.output, json);
}

async function writeOutput(output, content) {
  try {
    await writeFile(output, content);
  } catch (error) {
    const why = { ENOENT: 'its folder does not exist', EISDIR: 'it is a folder', EACCES: 'permission denied' }[error.code];
    throw new Error(`cannot write ${output}: ${why ?? error.message}`);
  }
}

async function serveCommand(args) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, strict: true, options: { port: { type: 'string' } } });
  const port = Number(values.port ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (got ${values.port})`);
  const { serveFolder } = await import('./serve.js');
  const { url, root } = await serveFolder(positionals[0] ?? '.', { port }).catch((error) => {
    throw error.code === 'EADDRINUSE' ? new UsageError(`port ${port} is in use: give another with --port (0 picks a free one)`) : error;
  });
  console.log(`attnlens: serving ${root} at ${url}/ (offline; Ctrl+C to stop)`);
}

async function pythonCommand() {
  const { pythonHelper } = await import('./python.js');
  process.stdout.write(await pythonHelper());
}

const COMMANDS = { render: renderCommand, run: runCommand, serve: serveCommand, python: pythonCommand };

async function main([command, ...args]) {
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(await usage());
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  await COMMANDS[command](args);
  return 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const usageError = error instanceof UsageError || error?.code?.startsWith?.('ERR_PARSE_ARGS');
  console.error(`attnlens: ${error.message}`);
  if (usageError) console.error(`\n${await usage()}`);
  else if (error instanceof OptionError) console.error('(attnlens help lists the options)');
  process.exitCode = usageError || error instanceof OptionError ? 2 : 1;
}
