// The text of the single-file bundle (web/dist/attnlens-single.js), which a standalone HTML file
// inlines. Fetched once, same-origin, from next to this module (the package ships it; bundlers
// emit it as an asset from this `new URL(…, import.meta.url)`). The single-file build swaps this
// module for scripts/single/bundle-single.js (the bundle is itself).

const url = new URL('../../dist/attnlens-single.js', import.meta.url);
let pending = null;

/** Promise of the bundle's text. */
export function singleBundle() {
  pending ??= fetch(url).then(async (response) => {
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.text();
  }).catch((error) => {
    pending = null;
    throw new Error(`toHTML() needs the single-file bundle at ${url.href} (${error.message}); ` +
      'it ships in the npm package as web/dist/attnlens-single.js');
  });
  return pending;
}
