// The Chromium half of `npm run bench:models`: models-page.html in headless Chromium
// (bench-page.mjs), served cross-origin isolated (COOP/COEP) so that wllama's threads run.
import { withBenchPage } from './bench-page.mjs';
import { ISOLATION_HEADERS } from '../serve.mjs';

export function runModelsInBrowser(spec, { log = () => {} } = {}) {
  return withBenchPage(async (page, context) => {
    const result = await page.evaluate((s) => window.attnlensModelsBench({ checkTokens: 16, deadlineMs: 600_000, headsGrid: { tokens: 64, redraws: 5 }, ...s }), spec);
    result.browser = context.browser()?.version() ?? result.userAgent;
    return result;
  }, { log: (t) => log(`[page] ${t}`), headers: ISOLATION_HEADERS, pagePath: '/scripts/bench/models-page.html' });
}
