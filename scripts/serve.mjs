// The static server for the demo page and the browser tests (its code: web/cli/serve.js, which
// the package's `attnlens serve` shares). Usage: node scripts/serve.mjs [--port N] (PORT env also works).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ISOLATION_HEADERS, STRICT_CSP, WEB_ROOT, serve } from '../web/cli/serve.js';

export { ISOLATION_HEADERS, STRICT_CSP, WEB_ROOT, serve };

// The demo page is cross-origin isolated (COOP/COEP), so that it runs the threaded engine build.
export const DEMO_HEADERS = { 'Content-Security-Policy': STRICT_CSP, ...ISOLATION_HEADERS };

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--port');
  const port = Number(flag > 0 ? process.argv[flag + 1] : process.env.PORT ?? 8080);
  try {
    const { url } = await serve({ port, headers: DEMO_HEADERS });
    console.log(`attnlens demo: ${url}/demo/  (offline; Ctrl+C to stop)`);
  } catch (error) {
    if (error.code !== 'EADDRINUSE') throw error;
    console.error(`port ${port} is in use: start with another one, e.g. PORT=${port + 1} npm start`);
    process.exitCode = 1;
  }
}
