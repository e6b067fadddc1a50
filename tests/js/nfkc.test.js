// The USE-lite tokenizer's NFKC (tables generated at build time from Python's unicodedata by
// scripts/model/gen_nfkc.py) against String.prototype.normalize('NFKC') (ICU) on every code point
// assigned in that Unicode version: docs/testing.md's claim. The normaliser is reached through
// model.tokenize(): its pieces and unknown spans cover the normalised text exactly ('▁' before it
// and for each space), so their concatenation is the engine's NFKC of the input.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { init } from 'attnlens';

// The code points Python's unicodedata assigns (general category not Cn; surrogates left out, as
// text cannot hold them alone), as [first, last] ranges, and its Unicode version. python3 is on
// every machine that builds (CMake runs gen_nfkc.py with it).
const ASSIGNED = `
import json, sys, unicodedata as ud
ranges = []
for cp in range(0x110000):
    if 0xD800 <= cp < 0xE000 or ud.category(chr(cp)) == 'Cn':
        continue
    if ranges and ranges[-1][1] == cp - 1: ranges[-1][1] = cp
    else: ranges.append([cp, cp])
print(json.dumps({'version': ud.unidata_version, 'ranges': ranges}))`;

const processed = (text) => `\u2581${text.normalize('NFKC').replaceAll(' ', '\u2581')}`;
const hex = (cp) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

let model, assigned;
before(async () => {
  model = await (await init()).loadModel();
  const python = await promisify(execFile)('python3', ['-c', ASSIGNED], { maxBuffer: 64 << 20 }).catch((error) => error);
  assert.notEqual(python.code, 'ENOENT', 'python3 is missing: run scripts/setup.sh (it installs python3)');
  assert.equal(python.code ?? 0, 0, python.stderr);
  assigned = JSON.parse(python.stdout);
});

describe('USE-lite NFKC against String.prototype.normalize', () => {
  it('agrees on every assigned code point, alone after a space', (t) => {
    const [major] = assigned.version.split('.').map(Number);
    assert.ok(Number(process.versions.unicode.split('.')[0]) >= major,
      `Node's ICU (Unicode ${process.versions.unicode}) predates the tables' Unicode ${assigned.version}`);
    const codePoints = assigned.ranges.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i));
    // Each code point after its own space: a starter between them keeps NFKC from composing or
    // reordering across code points, so a chunk's normal form is the concatenation of theirs.
    const joined = (cps) => model.tokenize(cps.map((cp) => ` ${String.fromCodePoint(cp)}`).join(''));
    const wrong = [];
    const check = (cps) => {
      const got = joined(cps);
      const want = processed(cps.map((cp) => ` ${String.fromCodePoint(cp)}`).join(''));
      if (!got.clipped && got.tokens.join('') === want) return;
      if (cps.length === 1) {
        if (got.clipped) assert.fail(`${hex(cps[0])} alone is more than 128 tokens`);
        wrong.push(`${hex(cps[0])}: ${JSON.stringify(got.tokens.join(''))} vs ${JSON.stringify(want)}`);
        return;
      }
      const half = cps.length >> 1;
      check(cps.slice(0, half));
      check(cps.slice(half));
    };
    for (let i = 0; i < codePoints.length; i += 32) check(codePoints.slice(i, i + 32));
    t.diagnostic(`${codePoints.length} code points assigned in Unicode ${assigned.version} (Python), ` +
      `against ICU's Unicode ${process.versions.unicode}: ${wrong.length} differ`);
    assert.ok(codePoints.length > 250_000, `${codePoints.length} code points`);
    assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} code points differ`);
  });
});
