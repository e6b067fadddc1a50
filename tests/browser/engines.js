// One face for the three engines the cross-engine suite drives: Chromium (playwright-core, Debian's
// chromium), Firefox ESR (puppeteer-core over WebDriver BiDi) and WebKitGTK (a minimal W3C
// WebDriver client: plain fetch to a local WebKitWebDriver that starts MiniBrowser). Each engine
// gives: open(url), evaluate(fn, arg), waitFor(fn, arg), keys(...names), click(x, y),
// screenshot() → PNG bytes, problems() → console errors and page errors, close().
//
// Console errors: Chromium and Firefox report them through the driver; classic WebDriver has no
// console endpoint, so every page served by the suite also records them itself (RECORDER, put
// first in each HTML page by the suite's server) and problems() reads both.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { HANG_GUARD_MS } from './support.js';

// ATTNLENS_ENGINES=firefox,webkit runs a few while working on them; npm test runs all three.
export const ENGINES = (process.env.ATTNLENS_ENGINES ?? 'chromium,firefox,webkit').split(',');

const PATHS = {
  chromium: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  firefox: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
  webkit: process.env.WEBKIT_DRIVER_PATH ?? '/usr/bin/WebKitWebDriver',
};
const MINIBROWSER = process.env.MINIBROWSER_PATH ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const XVFB_RUN = '/usr/bin/xvfb-run';
const PACKAGES = { chromium: 'chromium', firefox: 'firefox-esr', webkit: 'webkit2gtk-driver' };

/**
 * Page-side recorder (a classic script, so that it runs before the page's modules): console
 * errors and warnings, uncaught errors, unhandled rejections and CSP violations land in
 * window.__problems; every resource the page fetched is in performance's resource entries.
 */
export const RECORDER = `(() => {
  const problems = window.__problems = [];
  for (const level of ['error', 'warn']) {
    const original = console[level];
    console[level] = function (...args) { problems.push('console ' + level + ': ' + args.map(String).join(' ')); return original.apply(this, args); };
  }
  // Uncaught errors, and resources that failed to load (a figure's own 'error' event is its API).
  addEventListener('error', (e) => {
    if (e.message) problems.push('page error: ' + e.message);
    else if (e.target && /^(script|link|img|source|iframe|video|audio)$/.test(e.target.localName)) problems.push('resource failed: <' + e.target.localName + '> ' + (e.target.src || e.target.href));
  }, true);
  addEventListener('unhandledrejection', (e) => problems.push('unhandled rejection: ' + (e.reason && e.reason.stack || e.reason)));
  document.addEventListener('securitypolicyviolation', (e) => problems.push('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));
})();`;

/** Why an engine cannot run here, or null: a missing binary or display names its Debian package. */
export function missing(name) {
  if (!existsSync(PATHS[name])) return `${PATHS[name]} not found: install the Debian package ${PACKAGES[name]} (scripts/setup.sh)`;
  if (name === 'webkit' && !existsSync(MINIBROWSER)) return `${MINIBROWSER} not found: install webkit2gtk-driver (scripts/setup.sh)`;
  if (name === 'webkit' && !process.env.DISPLAY && !existsSync(XVFB_RUN)) return `WebKitGTK needs an X display and ${XVFB_RUN} is not there: install the Debian package xvfb (scripts/setup.sh)`;
  return null;
}

/**
 * Starts engine `name`; `colorScheme` 'light' or 'dark' is what prefers-color-scheme says.
 * Chromium emulates it; Firefox takes it from a preference; WebKitGTK from the GTK theme
 * (GTK_THEME=Adwaita:dark for MiniBrowser).
 */
export async function launch(name, { colorScheme = 'light', viewport = { width: 1000, height: 800 } } = {}) {
  const why = missing(name);
  if (why) throw new Error(`engine ${name}: ${why}`);
  const engine = name === 'chromium' ? await chromium(colorScheme, viewport)
    : name === 'firefox' ? await firefox(colorScheme, viewport) : await webkit(colorScheme, viewport);
  engine.name = name;
  // Shared on top of each driver: waiting, and the page-side record.
  // No speed limit: HANG_GUARD_MS only ends a wait that would never end (the tests' own timeouts too).
  engine.waitFor = async (fn, arg, { timeout = HANG_GUARD_MS, what = 'a condition' } = {}) => {
    const end = Date.now() + timeout;
    for (;;) {
      const value = await engine.evaluate(fn, arg);
      if (value) return value;
      if (Date.now() > end) throw new Error(`${name}: timed out after ${timeout} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  engine.problems = async () => [...engine.driverProblems.splice(0),
    ...await engine.evaluate(() => (window.__problems ?? []).splice(0))];
  return engine;
}

async function chromium(colorScheme, viewport) {
  const { chromium: driver } = await import('playwright-core');
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'attnlens-chromium-'));
  const context = await driver.launchPersistentContext(userDataDir, {
    executablePath: PATHS.chromium, colorScheme, viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  const driverProblems = [];
  // Every request off 127.0.0.1 (file://, data: and blob: aside) is refused, and reported.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return route.continue();
    if (url.hostname === '127.0.0.1') return route.continue();
    driverProblems.push(`request off 127.0.0.1 refused: ${url.href}`);
    return route.abort();
  });
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') driverProblems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => driverProblems.push(`page error: ${e.message}`));
  return {
    driverProblems, page,
    open: (url) => page.goto(url),
    evaluate: (fn, arg) => page.evaluate(fn, arg ?? null),
    keys: async (...names) => { for (const k of names) await page.keyboard.press(k === ' ' ? 'Space' : k); },
    click: (x, y) => page.mouse.click(x, y),
    screenshot: () => page.screenshot(),
    /** Chromium alone emulates these media features (reduced motion, forced colours). */
    emulateMedia: (features) => page.emulateMedia(features),
    close: async () => { await context.close(); await rm(userDataDir, { recursive: true, force: true }); },
  };
}

async function firefox(colorScheme, viewport) {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox', executablePath: PATHS.firefox, headless: true,
    defaultViewport: viewport,
    extraPrefsFirefox: {
      // 0 = dark, 1 = light: what prefers-color-scheme reports to pages.
      'layout.css.prefers-color-scheme.content-override': colorScheme === 'dark' ? 0 : 1,
      // Every request off 127.0.0.1 goes to a proxy on a closed port, so it is refused (the suite
      // also checks the pages' resource entries). Local addresses never use the proxy.
      'network.proxy.type': 1, 'network.proxy.http': '127.0.0.1', 'network.proxy.http_port': 9,
      'network.proxy.ssl': '127.0.0.1', 'network.proxy.ssl_port': 9, 'network.proxy.share_proxy_settings': true,
      'network.proxy.allow_hijacking_localhost': false,
      // Offline: no update, telemetry or captive-portal checks leave the machine.
      'network.captive-portal-service.enabled': false, 'network.connectivity-service.enabled': false,
      'app.update.enabled': false, 'datareporting.policy.dataSubmissionEnabled': false,
    },
  });
  const page = (await browser.pages())[0] ?? await browser.newPage();
  const driverProblems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warn') driverProblems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => driverProblems.push(`page error: ${e.message}`));
  return {
    driverProblems, page,
    open: (url) => page.goto(url, { waitUntil: 'load' }),
    evaluate: (fn, arg) => page.evaluate(fn, arg ?? null),
    keys: async (...names) => { for (const k of names) await page.keyboard.press(k === ' ' ? 'Space' : k); },
    click: (x, y) => page.mouse.click(x, y),
    screenshot: async () => Buffer.from(await page.screenshot()),
    close: () => browser.close(),
  };
}

// W3C WebDriver key codes (§17.4.2) for the keys the suite presses.
const KEYS = {
  Tab: '\uE004', Enter: '\uE007', Shift: '\uE008', Escape: '\uE00C', ' ': ' ', PageUp: '\uE00E', PageDown: '\uE00F',
  End: '\uE010', Home: '\uE011', ArrowLeft: '\uE012', ArrowUp: '\uE013', ArrowRight: '\uE014', ArrowDown: '\uE015',
};

const freePort = () => new Promise((resolve, reject) => {
  const server = net.createServer().listen(0, '127.0.0.1', () => { const { port } = server.address(); server.close(() => resolve(port)); });
  server.on('error', reject);
});

async function webkit(colorScheme, viewport) {
  const port = await freePort();
  // Requests off 127.0.0.1 go to a proxy on a closed port (refused); the theme sets the scheme.
  const proxy = 'http://127.0.0.1:9';
  const env = { ...process.env, http_proxy: proxy, https_proxy: proxy, HTTP_PROXY: proxy, HTTPS_PROXY: proxy,
    no_proxy: '127.0.0.1,localhost', NO_PROXY: '127.0.0.1,localhost', GTK_THEME: colorScheme === 'dark' ? 'Adwaita:dark' : 'Adwaita' };
  // MiniBrowser needs an X display: without one, the driver runs under xvfb-run (its own group,
  // so that close() ends Xvfb too).
  const command = [PATHS.webkit, `--port=${port}`, '--host=127.0.0.1'];
  const [file, ...args] = process.env.DISPLAY ? command : [XVFB_RUN, '-a', ...command];
  const driver = spawn(file, args, { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const stop = () => { try { process.kill(-driver.pid, 'SIGTERM'); } catch { /* already gone */ } };
  let log = '';
  driver.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  const base = `http://127.0.0.1:${port}`;
  const call = async (method, url, body) => {
    const response = await fetch(base + url, { method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    const json = await response.json();
    if (json.value?.error) throw new Error(`WebKitWebDriver ${method} ${url}: ${json.value.error}: ${json.value.message}`);
    return json.value;
  };
  for (let tries = 0; ; tries++) {  // the driver listens a moment after it starts
    try { await call('GET', '/status'); break; } catch (error) {
      if (tries > 300) { stop(); throw new Error(`WebKitWebDriver did not start: ${error.message}\n${log}`); }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const { sessionId } = await call('POST', '/session', { capabilities: { alwaysMatch: {
    'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
  } } });
  const s = `/session/${sessionId}`;
  await call('POST', `${s}/timeouts`, { script: 300000 });
  await call('POST', `${s}/window/rect`, { width: viewport.width, height: viewport.height });
  // Pointer and key actions, in the viewport's coordinates.
  const actions = (list) => call('POST', `${s}/actions`, { actions: list });
  return {
    driverProblems: [],
    open: (url) => call('POST', `${s}/url`, { url }),
    // An async script: resolves or reports the page's error message.
    evaluate: async (fn, arg) => {
      const out = await call('POST', `${s}/execute/async`, {
        // The driver compiles the script itself (no eval in the page, which the strict CSP forbids).
        script: `const done = arguments[arguments.length - 1];
          Promise.resolve(arguments[0]).then(${fn.toString()})
            .then((value) => done({ value: value === undefined ? null : value }), (e) => done({ error: String(e && e.stack || e) }));`,
        args: [arg ?? null],
      });
      if (out.error) throw new Error(`webkit: ${out.error}`);
      return out.value;
    },
    keys: async (...names) => {
      const codes = names.map((k) => KEYS[k] ?? k);
      await actions([{ type: 'key', id: 'keyboard', actions: codes.flatMap((value) => [{ type: 'keyDown', value }, { type: 'keyUp', value }]) }]);
    },
    click: (x, y) => actions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [
      { type: 'pointerMove', x: Math.round(x), y: Math.round(y), origin: 'viewport' },
      { type: 'pointerDown', button: 0 }, { type: 'pointerUp', button: 0 }] }]),
    screenshot: async () => Buffer.from(await call('GET', `${s}/screenshot`), 'base64'),
    close: async () => {
      await call('DELETE', s).catch(() => {});
      stop();
    },
  };
}
