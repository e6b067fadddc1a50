// axe-core in any engine of engines.js: the suite's server sends axe.min.js same-origin
// (/__engines__/axe.js, allowed by the strict CSP), the page loads it as a classic script, and
// axe.run() checks WCAG 2.1 A and AA. Returns the serious and critical violations, one line each.
export const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export async function audit(engine, { include = null } = {}) {
  const result = await engine.evaluate(async ({ include, tags }) => {
    if (!window.axe) {
      const script = document.createElement('script');
      script.src = '/__engines__/axe.js';
      await new Promise((resolve, reject) => { script.onload = resolve; script.onerror = () => reject(new Error('axe.js did not load')); document.head.append(script); });
    }
    const context = include ? { include: include.map((id) => `#${id}`) } : document;
    const { violations } = await window.axe.run(context, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}×): ${v.nodes.slice(0, 3).map((node) => `${node.target.join(' ')} — ${node.failureSummary.split('\n').slice(1, 2).join('')}`).join(' | ')}`);
  }, { include, tags: WCAG });
  return result;
}
