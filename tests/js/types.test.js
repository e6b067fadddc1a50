// The hand-written TypeScript declarations against example usage (tests/types/*.ts): every
// public entry imported by package name and resolved through package.json "exports"; misuse
// marked `// @ts-expect-error` must fail to type-check (tsc reports an unused directive if not).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';

import { ROOT } from './pack.js';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

it('tsc --noEmit accepts the usage examples and rejects the misuse in tests/types', async () => {
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', path.join(ROOT, 'tests/types'), '--pretty', 'false'],
    { cwd: ROOT }).catch((e) => e);
  assert.equal(result.code ?? 0, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
});
