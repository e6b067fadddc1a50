// Walks a page of figures with Tab alone: every tab stop the figures offer (roving groups offer
// one), whether Tab reached it, and whether it showed a focus ring (an outline of ≥ 2 px or a box
// shadow). `driver` has evaluate(fn, arg) and a way to press Tab: a playwright page
// (motion-colours.test.js) or an engines.js engine (engines.test.js).
export async function tabWalk(driver, ids, { from = 'start', pressTab } = {}) {
  const stops = await driver.evaluate(({ ids, from }) => {
    const out = [];
    for (const id of ids) [...document.getElementById(id).shadowRoot.querySelectorAll('button, select, input, textarea, [tabindex]')]
      .filter((el) => !el.disabled && el.tabIndex >= 0 && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden')
      .forEach((el, k) => { el.dataset.stop = `${id}/${el.localName}.${el.className || ''}#${k}`; out.push(el.dataset.stop); });
    document.getElementById(from).focus();
    return out;
  }, { ids, from });
  const reached = [], unringed = [];
  for (let k = 0; k < stops.length + 20; k++) {
    await pressTab();
    const at = await driver.evaluate(() => {
      let el = document.activeElement;
      while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
      if (!el || el === document.body) return null;
      const s = getComputedStyle(el);
      return { stop: el.dataset.stop ?? (el.id || el.localName), ring: (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2) || s.boxShadow !== 'none' };
    });
    if (!at || reached.includes(at.stop)) break;
    reached.push(at.stop);
    if (!at.ring) unringed.push(at.stop);
  }
  return { stops, reached, missed: stops.filter((s) => !reached.includes(s)), unringed };
}
