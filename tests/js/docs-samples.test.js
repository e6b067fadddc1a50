// Every code sample in README.md and docs/*.md, found and run (issue 18). Each fenced block is
// classified by its info string, or by a `<!-- sample: … -->` comment on the line before it:
//   js       an ES module run by Node from inside the package (so `import 'attnlens'` resolves
//            to this repository); it must exit 0
//   html     a page in headless Chromium, served with the strict CSP beside the package's files
//            and the fixtures the samples name (#run, runs/*.json, /data/cat.json, …): every
//            attn-* element must draw without an error, with a clean console and no request off
//            127.0.0.1 (a block without a module script gets the minified elements' index.js)
//   python   python3 with stand-ins for PyTorch's model, inputs and tokenizer (attention as
//            nested lists behind .tolist()); what it writes must render with the command line
//   sh       each line run by bash in a folder of fixtures, `npx attnlens` being this
//            repository's web/cli/attnlens.js; `serve` gets `--port 0` and is stopped once it answers
//   text     prose in a fence (a formula, a diagram): listed, not run
//   <!-- sample: same-as FILE -->       every line of the block is a line of FILE (the framework
//            apps that tests/browser/frameworks.test.js builds and checks)
//   <!-- sample: checked-by FILE… -->   commands the named test scripts run (npm test, the fuzzer);
//            each command's program must be named in one of them, or be an npm script
// A block of any other kind fails the test, so no sample goes unchecked silently.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { startBrowser } from '../browser/support.js';
import * as ref from './reference.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'web/cli/attnlens.js');
const PYTHON = '/usr/bin/python3';
const run = promisify(execFile);
// Hang guards, not speed limits: a sample runs to its exit, a server until it prints its URL, a
// page until its figures are defined; only something that never gets there meets this.
const HANG_GUARD_MS = 300_000;

const FILES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** The fenced blocks of a Markdown file: { file, line, lang, code, directive }. */
function blocksOf(file) {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^```(\S*)\s*$/);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    assert.ok(end > i, `${file}:${i + 1}: a fence that is never closed`);
    const directive = lines[i - 1]?.match(/^<!-- sample: (.+?) -->$/)?.[1] ?? null;
    out.push({ file, line: i + 1, lang: open[1], code: lines.slice(i + 1, end).join('\n'), directive });
    i = end;
  }
  return out;
}

const KINDS = ['js', 'html', 'python', 'sh', 'text'];
function kindOf(block) {
  if (block.directive) {
    const [kind, ...args] = block.directive.split(/\s+/);
    if (kind === 'same-as' || kind === 'checked-by') return { kind, args };
    return { kind: null, why: `unknown directive "${block.directive}"` };
  }
  if (KINDS.includes(block.lang)) return { kind: block.lang, args: [] };
  return { kind: null, why: `a \`\`\`${block.lang || '(no language)'} block with no <!-- sample: … --> line` };
}

const BLOCKS = FILES.flatMap(blocksOf);
const where = (b) => `${b.file}:${b.line}`;
const ofKind = (kind) => BLOCKS.filter((b) => kindOf(b).kind === kind);

// ——— fixtures the samples name ———

const SENTENCE = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.'];
const vectors = (tokens, d, seed) => {
  const flat = ref.uniform(tokens.length * d, seed);
  return Array.from({ length: tokens.length }, (_, i) => Array.from(flat.subarray(i * d, (i + 1) * d)));
};
const CAT = { tokens: SENTENCE, Q: vectors(SENTENCE, 4, 1), K: vectors(SENTENCE, 4, 2), causal: true };
// `#run`: a model's precomputed attention, 2 layers × 4 heads, with the tokens the hiding samples hide.
const RUN_TOKENS = ['[CLS]', 'The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', 'New York', '.', '[SEP]'];
const RUN = { tokens: RUN_TOKENS, attention: ref.randomAttention(2, 4, RUN_TOKENS.length, 3) };
const side = (seed) => ({ tokens: RUN_TOKENS, attention: ref.randomAttention(1, 1, RUN_TOKENS.length, seed) });

describe('docs/performance.md: every table names the command that printed it and the machine', () => {
  // A table's label is the first line of the `<!-- report:KEY -->` block it is in (report.mjs
  // writes "Printed by `command` on <machine>…" there), else the paragraph right before it (the
  // previous session's tables say "on the machine above", under "The machine"), or a statement
  // that no command in the repository prints it.
  const lines = readFileSync(path.join(ROOT, 'docs/performance.md'), 'utf8').split('\n');
  const starts = lines.map((l, i) => (l.startsWith('|') && !lines[i - 1]?.startsWith('|') ? i : -1)).filter((i) => i >= 0);
  it(`finds the tables (${starts.length})`, () => assert.ok(starts.length >= 5));
  for (const i of starts)
    it(`docs/performance.md:${i + 1}`, () => {
      let open = i - 1;
      while (open >= 0 && !/^<!-- \/?report:/.test(lines[open])) open--;
      let text;
      if (open >= 0 && lines[open].startsWith('<!-- report:')) text = lines[open + 1];
      else {
        let j = i - 1;
        while (j >= 0 && lines[j].trim() === '') j--;
        const paragraph = [];
        for (; j >= 0 && lines[j].trim() !== '' && !lines[j].startsWith('|'); j--) paragraph.unshift(lines[j]);
        text = paragraph.join(' ');
      }
      assert.ok(/Printed by `[^`]+`.*? on .+/.test(text) || /No command in the repository prints this table/.test(text),
        `the table at line ${i + 1} is not labelled with its command and machine: "${text.slice(0, 160)}"`);
      assert.ok(!/Printed by/.test(text) || /on (the machine above|[^;]+ cores)/.test(text), `line ${i + 1}: no machine named`);
    });
});

describe('the code samples of README.md and docs/', () => {
  it('lists every block and knows how to check each', (t) => {
    const unknown = [];
    for (const b of BLOCKS) {
      const k = kindOf(b);
      t.diagnostic(`${where(b)} ${b.lang || '-'}: ${k.kind ?? `UNCLASSIFIED (${k.why})`}${k.args?.length ? ` ${k.args.join(' ')}` : ''}`);
      if (!k.kind) unknown.push(`${where(b)}: ${k.why}`);
    }
    assert.ok(BLOCKS.length >= 25, `only ${BLOCKS.length} blocks found`);
    assert.deepEqual(unknown, [], 'blocks no test can check');
  });

  describe('js: run by Node', () => {
    let dir;
    before(async () => {
      // Inside the package, so that `import 'attnlens'` is this repository (self-reference).
      await mkdir(path.join(ROOT, '.build'), { recursive: true });
      dir = await mkdtemp(path.join(ROOT, '.build', 'docs-samples-'));
      // models/: Hugging Face folders the model samples open (random weights, real vocabularies).
      const { bertCheckpoint, gpt2Checkpoint, writeModelFolder } = await import('./hf-checkpoints.js');
      for (const [name, ckpt, tokenizer] of [['gpt2', gpt2Checkpoint({ seed: 5 }), 'gpt2'],
        ['bert', bertCheckpoint({ seed: 6 }), 'bert'], ['bert-encoder', bertCheckpoint({ seed: 7, mlm: false }), 'bert']]) {
        await mkdir(path.join(dir, 'models', name), { recursive: true });
        writeModelFolder(ckpt, { dtype: 'F16', tokenizer, dir: path.join(dir, 'models', name) });
      }
    });
    after(() => rm(dir, { recursive: true, force: true }));
    for (const b of ofKind('js'))
      it(`${where(b)} runs`, async () => {
        const file = path.join(dir, `${b.file.replace(/\W/g, '-')}-${b.line}.mjs`);
        await writeFile(file, `${b.code}\n`);
        const { stderr } = await run(process.execPath, [file], { cwd: dir, timeout: HANG_GUARD_MS }).catch((error) => {
          throw new Error(`${where(b)} failed: ${error.stderr || error.message}`);
        });
        assert.equal(stderr, '', `${where(b)} wrote to stderr`);
      });
  });

  describe('html: pages in headless Chromium', () => {
    let browser, site;
    before(async () => {
      site = await mkdtemp(path.join(tmpdir(), 'attnlens-samples-'));
      // The package as a page reaches it: attnlens/web/… next to the page, and the single file
      // copied to /attnlens/attnlens-single.js as the blog recipe says.
      await mkdir(path.join(site, 'attnlens'));
      await symlink(path.join(ROOT, 'web'), path.join(site, 'attnlens', 'web'));
      await copyFile(path.join(ROOT, 'web/dist/attnlens-single.js'), path.join(site, 'attnlens', 'attnlens-single.js'));
      await mkdir(path.join(site, 'samples', 'runs'), { recursive: true });
      await symlink(path.join(site, 'attnlens'), path.join(site, 'samples', 'attnlens'));
      await writeFile(path.join(site, 'samples', 'runs', 'base.json'), JSON.stringify(side(4)));
      await writeFile(path.join(site, 'samples', 'runs', 'tuned.json'), JSON.stringify(side(5)));
      // models/gpt2/: the Hugging Face folder README's page sample opens (random weights, GPT-2's vocabulary).
      const { gpt2Checkpoint, writeModelFolder } = await import('./hf-checkpoints.js');
      await mkdir(path.join(site, 'samples', 'models', 'gpt2'), { recursive: true });
      writeModelFolder(gpt2Checkpoint({ seed: 5 }), { dtype: 'F16', tokenizer: 'gpt2', dir: path.join(site, 'samples', 'models', 'gpt2') });
      await copyFile(path.join(ROOT, 'tests/browser/snapshots/bars-light.png'), path.join(site, 'samples', 'it-cat.png'));
      await mkdir(path.join(site, 'data'));
      await writeFile(path.join(site, 'data', 'cat.json'), JSON.stringify(CAT));
      await mkdir(path.join(site, 'img'));
      await copyFile(path.join(ROOT, 'docs/img/heatmap-light.svg'), path.join(site, 'img', 'cat-heatmap.svg'));
      browser = await startBrowser({ serveOptions: { root: site, index: '/samples/' } });
    });
    after(async () => {
      await browser?.close();
      await rm(site, { recursive: true, force: true });
    });

    for (const [k, b] of ofKind('html').entries())
      it(`${where(b)} draws every figure`, async () => {
        let body = b.code;
        if (!/<script type="module"/.test(body)) body = `<script type="module" src="attnlens/web/dist/elements/index.js"></script>\n${body}`;
        if (/src(-a|-b)?="#run"/.test(body) && !/id="run"/.test(body))
          body += `\n<script type="application/json" id="run">${JSON.stringify(RUN)}</script>`;
        const name = `sample-${k}.html`;
        await writeFile(path.join(site, 'samples', name), `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${where(b)}</title>` +
          `<link rel="icon" href="data:,"></head><body>\n${body}\n</body></html>\n`);
        const page = await browser.newPage();
        // Chromium reports a HEAD request as failed (net::ERR_ABORTED) even once its 200 is in, as
        // for other body-less answers (playwright issue 32752); a page asks a model folder's
        // config.json by HEAD (web/model/lm-files.js). Those, and only those, are not problems.
        const answeredHeads = [];
        page.on('requestfailed', async (r) => {
          if (r.method() === 'HEAD' && (await r.response())?.status() === 200) answeredHeads.push(`request failed: ${r.url()}`);
        });
        await page.goto(`${browser.url}/samples/${name}`);
        const states = await page.evaluate(async (guard) => {
          const els = [...document.querySelectorAll('*')].filter((el) => el.localName.startsWith('attn-'));
          let timer;
          const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`figures not defined after ${guard / 1000} s`)), guard); });
          await Promise.race([Promise.all(els.map((el) => customElements.whenDefined(el.localName))), timeout]);
          clearTimeout(timer);
          return Promise.all(els.map(async (el) => ({ tag: el.localName, ok: await el.updateComplete, error: el.error ?? null,
            attributeErrors: (el.attributeErrors ?? []).map((e) => e.message) })));
        }, HANG_GUARD_MS);
        assert.ok(states.length > 0, `${where(b)}: no figure in the sample`);
        for (const s of states) assert.deepEqual([s.ok, s.error, s.attributeErrors], [true, null, []], `${where(b)}: <${s.tag}>`);
        await page.waitForLoadState('networkidle');
        const problems = [...page.problems];
        for (const p of answeredHeads) problems.splice(problems.indexOf(p), problems.includes(p) ? 1 : 0);
        assert.deepEqual(problems, [], `${where(b)}: console errors, failed requests`);
        assert.deepEqual(browser.offHost, [], `${where(b)}: requests that left 127.0.0.1`);
        await page.close();
      });
  });

  describe('python: run by python3 with stand-ins for PyTorch', () => {
    let dir;
    // `model`, `inputs` and `tokenizer` as the samples use them: 4 layers × 6 heads over 9 tokens,
    // tensors as nested lists behind .tolist() and [i].
    const STAND_INS = `
import random
class Tensor:
    def __init__(self, v): self.v = v
    def tolist(self): return self.v
    def __getitem__(self, i): return Tensor(self.v[i])
TOKENS = ["[CLS]", "the", "cat", "sat", "because", "it", "was", "tired", "[SEP]"]
random.seed(7)
def _rows(n):
    out = []
    for _ in range(n):
        r = [random.random() ** 2 for _ in range(n)]
        out.append([x / sum(r) for x in r])
    return out
class _Out:
    attentions = tuple(Tensor([[_rows(len(TOKENS)) for _ in range(6)]]) for _ in range(4))
def model(**kwargs):
    assert kwargs.get("output_attentions") is True
    return _Out()
inputs = {"input_ids": Tensor([list(range(len(TOKENS)))]), "attention_mask": Tensor([[1] * len(TOKENS)])}
class _Tokenizer:
    def convert_ids_to_tokens(self, ids): return [TOKENS[i] for i in (ids.tolist() if hasattr(ids, "tolist") else ids)]
tokenizer = _Tokenizer()
`;
    before(async () => {
      assert.ok(existsSync(PYTHON), `${PYTHON} is missing (scripts/setup.sh installs the notebook tools)`);
      dir = await mkdtemp(path.join(tmpdir(), 'attnlens-py-'));
      await writeFile(path.join(dir, 'attnlens_nb.py'), (await run(process.execPath, [CLI, 'python'])).stdout);
    });
    after(() => rm(dir, { recursive: true, force: true }));
    for (const b of ofKind('python'))
      it(`${where(b)} runs, and what it writes draws`, async () => {
        const file = path.join(dir, `sample-${b.line}.py`);
        await writeFile(file, `${STAND_INS}\n${b.code}\n`);
        await run(PYTHON, [file], { cwd: dir, timeout: HANG_GUARD_MS }).catch((error) => {
          throw new Error(`${where(b)} failed: ${error.stderr || error.message}`);
        });
        const written = [...b.code.matchAll(/["']([\w.-]+\.(json|svg|png|html))["']/g)].map((m) => m[1]);
        assert.ok(written.length > 0, `${where(b)} writes no file the test can check`);
        const { render } = await import('../../web/cli/render.js');
        for (const f of written) {
          const bytes = readFileSync(path.join(dir, f));
          if (f.endsWith('.json')) assert.match(await render(JSON.parse(bytes)), /^<\?xml/, `${f} renders`);
          else if (f.endsWith('.svg')) assert.match(bytes.toString(), /^<\?xml[^]*<svg/, f);
          else if (f.endsWith('.png')) assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], f);
          else assert.match(bytes.toString(), /^<!doctype html>/i, f);
        }
      });
  });

  describe('sh: run by bash', () => {
    let dir, bin;
    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'attnlens-sh-'));
      bin = path.join(dir, '.bin');
      await mkdir(bin);
      await writeFile(path.join(bin, 'npx'), `#!/bin/sh\n[ "$1" = attnlens ] || { echo "npx $1: only attnlens here" >&2; exit 99; }\nshift\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
      await writeFile(path.join(dir, 'data.json'), JSON.stringify(CAT));
      await mkdir(path.join(dir, 'static', 'data'), { recursive: true });
      await mkdir(path.join(dir, 'static', 'img'));
      await writeFile(path.join(dir, 'static', 'data', 'cat.json'), JSON.stringify(CAT));
      await mkdir(path.join(dir, 'site'));
      await writeFile(path.join(dir, 'site', 'index.html'), '<!doctype html><title>site</title>');
      // models/gpt2: a Hugging Face folder for `attnlens run` (random weights, GPT-2's vocabulary).
      const { gpt2Checkpoint, writeModelFolder } = await import('./hf-checkpoints.js');
      await mkdir(path.join(dir, 'models', 'gpt2'), { recursive: true });
      writeModelFolder(gpt2Checkpoint({ seed: 5, layers: 6 }), { dtype: 'F16', tokenizer: 'gpt2', dir: path.join(dir, 'models', 'gpt2') });
    });
    after(() => rm(dir, { recursive: true, force: true }));
    const env = () => ({ ...process.env, PATH: `${bin}:${process.env.PATH}` });

    // A server stays up: start it on a free port, fetch what it serves, stop it.
    async function serveLine(line) {
      const command = `${line.replace(/\s+#.*$/, '')} --port 0`;
      const child = spawn('bash', ['-c', `exec ${command}`], { cwd: dir, env: env(), detached: true });
      try {
        const url = await new Promise((resolve, reject) => {
          let out = '';
          const timer = setTimeout(() => reject(new Error(`${command}: no URL after ${HANG_GUARD_MS / 1000} s (${out})`)), HANG_GUARD_MS);
          child.stdout.on('data', (d) => {
            out += d;
            const found = out.match(/http:\/\/127\.0\.0\.1:\d+\S*/);
            if (found) { clearTimeout(timer); resolve(found[0]); }
          });
          child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${command} exited (${code}): ${out}`)); });
        });
        const response = await fetch(url);
        assert.equal(response.status, 200, `${command}: ${url}`);
      } finally {
        process.kill(-child.pid);
      }
    }

    for (const b of ofKind('sh'))
      it(`${where(b)}: every line runs`, async () => {
        for (const line of b.code.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'))) {
          if (/\bnpx attnlens serve\b/.test(line)) { await serveLine(line); continue; }
          await run('bash', ['-c', line], { cwd: dir, env: env(), timeout: HANG_GUARD_MS }).catch((error) => {
            throw new Error(`${where(b)}: ${line}\n${error.stderr || error.message}`);
          });
          const out = line.match(/(?:-o|>)\s*(\S+\.(svg|png|html|py))/)?.[1];
          if (out) assert.ok(readFileSync(path.join(dir, out)).length > 100, `${line}: ${out} is empty`);
        }
      });
  });

  describe('same-as and checked-by: the code lives in a named test', () => {
    const lines = (text) => text.split('\n').map((l) => l.trim()).filter(Boolean);
    for (const b of ofKind('same-as'))
      it(`${where(b)} is the code of ${kindOf(b).args[0]}`, () => {
        const [file] = kindOf(b).args;
        const source = new Set(lines(readFileSync(path.join(ROOT, file), 'utf8')));
        for (const l of lines(b.code)) assert.ok(source.has(l), `${where(b)}: "${l}" is not a line of ${file}`);
      });
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    for (const b of ofKind('checked-by'))
      it(`${where(b)} is run by ${kindOf(b).args.join(', ')}`, () => {
        const named = kindOf(b).args.map((f) => {
          assert.ok(existsSync(path.join(ROOT, f)), `${where(b)} names ${f}, which does not exist`);
          return readFileSync(path.join(ROOT, f), 'utf8');
        });
        for (const line of b.code.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean)) {
          const npm = line.match(/^npm (?:run )?([\w:-]+)/);
          if (npm) { assert.ok(scripts[npm[1]], `${where(b)}: no npm script ${npm[1]}`); continue; }
          const program = line.split(/\s+/).find((w) => !/^\w+=/.test(w) && !w.startsWith('-') && !['bash', 'node'].includes(w));
          assert.ok(named.some((text) => text.includes(program)), `${where(b)}: ${program} is not named in ${kindOf(b).args}`);
        }
      });
  });
});
