// Stands in for web/elements/lib/bundle.js inside the single-file build: the bundle to inline
// in a standalone HTML file is this very module, found inlined in the page (a standalone file
// exporting itself again) or fetched from its own URL.

/** Promise of the bundle's text. */
export async function singleBundle() {
  const inline = globalThis.document?.getElementById('attnlens-bundle');
  if (inline?.localName === 'script') return inline.textContent;
  const response = await fetch(import.meta.url);
  if (!response.ok) throw new Error(`toHTML() could not read the single-file bundle at ${import.meta.url} (HTTP ${response.status})`);
  return response.text();
}
