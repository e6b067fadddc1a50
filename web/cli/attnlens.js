#!/usr/bin/env node
// The attnlens command line (Node ≥ 20, no browser):
//   attnlens render data.json --figure heatmap --format svg -o out.svg
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
  attnlens serve [folder] [--port N]          serve a folder offline (default: .)
  attnlens python                             print the Python/Jupyter helper (attnlens_nb.py)
  attnlens help

render options:
  --figure NAME     FIGURES (default heatmap)
  --format F        svg | html | png (default: from -o's extension, else svg)
  -o, --output FILE write there (default: standard output)
  --theme T         light | dark (svg/png default light; html default: the reader's)
  --width PX        the SVG's display width (the drawing scales)
  --pixel-ratio R   PNG pixels per SVG unit (default 2)
  --title TEXT      the HTML document's title
  state:            --layer N --head N --query N|TOKEN --step S --scale auto|none|X
                    --temperature T --mask none|causal|padding|"causal padding"
                    --hide "TOKEN|N …" --renormalize true|false
  lines:            --heads all|"N …" --key N|TOKEN --threshold W`;

// No V8 flag is set here (the library never flips them): the engine runs the build this Node
// validates, SIMD128 on Node 20 (the build of the standalone HTML files and of Safari), or
// relaxed SIMD (Chromium's) when node itself runs with --experimental-wasm-relaxed-simd.

class UsageError extends Error {}

const usage = async () => USAGE.replace('FIGURES', (await figureNames()).join(' | '));

async function readInput(file) {
  let text;
  try {
    text = file === '-' ? await new Response(process.stdin).text() : await readFile(file, 'utf8');
  } catch (error) {
    throw new DataError(error.code === 'ENOENT' ? `${file}: no such file` : `cannot read ${file}: ${error.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DataError(`${file === '-' ? 'standard input' : file} is not valid JSON: ${error.message}`);
  }
}

async function renderCommand(args) {
  const stateOptions = Object.fromEntries([...Object.keys(STATE), ...OWN_OPTIONS].map((name) => [name, { type: 'string' }]));
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, strict: true,
    options: {
      ...stateOptions,
      figure: { type: 'string' }, format: { type: 'string' }, output: { type: 'string', short: 'o' },
      theme: { type: 'string' }, width: { type: 'string' }, 'pixel-ratio': { type: 'string' }, title: { type: 'string' },
    },
  });
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `render takes one data file (got ${positionals.join(' ')})` : 'render needs a data file (or - for standard input)');
  const { output, 'pixel-ratio': pixelRatio, ...options } = values;
  const ext = output && path.extname(output).slice(1).toLowerCase();
  options.format ??= FORMATS.includes(ext) ? ext : 'svg';
  if (pixelRatio !== undefined) options.pixelRatio = pixelRatio;
  const input = await readInput(positionals[0]);
  const out = await render(input, options).catch((error) => {
    if (error instanceof DataError) error.message = `${positionals[0] === '-' ? 'standard input' : positionals[0]}: ${error.message}`;
    throw error;
  });
  if (output) await writeFile(output, out);
  else process.stdout.write(out);
}

async function serveCommand(args) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, strict: true, options: { port: { type: 'string' } } });
  const port = Number(values.port ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (got ${values.port})`);
  const { serveFolder } = await import('./serve.js');
  const { url, root } = await serveFolder(positionals[0] ?? '.', { port });
  console.log(`attnlens: serving ${root} at ${url}/ (offline; Ctrl+C to stop)`);
}

async function pythonCommand() {
  const { pythonHelper } = await import('./python.js');
  process.stdout.write(await pythonHelper());
}

const COMMANDS = { render: renderCommand, serve: serveCommand, python: pythonCommand };

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
