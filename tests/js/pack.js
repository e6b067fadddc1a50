// Shared by the package tests: `npm pack` the repository into a temp folder, install the tarball
// into a fresh project offline, and walk a package's import graph. npm never reaches a registry
// here: the registry is pointed at a closed port on 127.0.0.1 and every command runs --offline.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Any registry request would fail fast instead of leaving the machine.
const OFFLINE_ENV = {
  ...process.env,
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_loglevel: 'error',
};

export function npm(args, cwd) {
  return run('npm', args, { cwd, env: OFFLINE_ENV, maxBuffer: 64 * 1024 * 1024 });
}

/** Packs the repository into a new temp folder: { dir, tarball, files: [{ path, size }] }. */
export async function pack() {
  const dir = await mkdtemp(path.join(tmpdir(), 'attnlens-pack-'));
  const { stdout } = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT);
  const [info] = JSON.parse(stdout);
  return { dir, tarball: path.join(dir, info.filename), files: info.files, info };
}

/**
 * A fresh project folder with the tarball installed offline (node_modules/attnlens), and extra
 * files written into it ({ relative path: contents }). Returns { dir, pkg } (pkg: the installed
 * package's folder).
 */
export async function installInto(tarball, files = {}, { name = 'attnlens-consumer' } = {}) {
  const dir = await mkdtemp(path.join(tmpdir(), `${name}-`));
  await writeFile(path.join(dir, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module' }, null, 2));
  await npm(['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball], dir);
  for (const [file, contents] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), contents);
  }
  return { dir, pkg: path.join(dir, 'node_modules', 'attnlens') };
}

export const remove = (dir) => (dir ? rm(dir, { recursive: true, force: true }) : undefined);

// Relative module specifiers in a JS file: static (import/export … from, side-effect imports) and
// dynamic (import('…') with a literal).
const STATIC = /(?:^|[;\s}])(?:import|export)\s*(?:[\w*{}\s,$]+\s*from\s*)?['"](\.{1,2}\/[^'"]+)['"]/g;
const DYNAMIC = /\bimport\(\s*(?:\/\*[^*]*\*\/\s*)?['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

export function importsOf(code) {
  const strip = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return {
    static: [...strip.matchAll(STATIC)].map((m) => m[1]),
    dynamic: [...strip.matchAll(DYNAMIC)].map((m) => m[1]),
  };
}

/**
 * The files reachable from `entry` (a path relative to `base`) through static imports, and the
 * targets of dynamic imports met on the way (not followed). Paths are relative to `base`.
 */
export function moduleGraph(base, entry) {
  const seen = new Set(), dynamic = new Set(), missing = [];
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    let code;
    try {
      code = readFileSync(path.join(base, file), 'utf8');
    } catch {
      missing.push(file);
      return;
    }
    if (!/\.(m?js)$/.test(file)) return;
    const { static: s, dynamic: d } = importsOf(code);
    const resolve = (spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    for (const spec of s) visit(resolve(spec));
    for (const spec of d) dynamic.add(resolve(spec));
  };
  visit(entry);
  return { files: [...seen].filter((f) => !missing.includes(f)), dynamic: [...dynamic], missing };
}

/** A package.json `sideEffects` / `files`-style glob as a RegExp over './'-less paths. */
export function globRegExp(glob) {
  const g = glob.replace(/^\.\//, '');
  let re = '';
  for (let i = 0; i < g.length; i++) {
    const c = g[i];
    if (c === '*' && g[i + 1] === '*') { re += '.*'; i++; if (g[i + 1] === '/') i++; }
    else if (c === '*') re += '[^/]*';
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
