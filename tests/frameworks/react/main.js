// React 19: custom elements take properties (data, query) and `on<event>` listeners natively.
import 'attnlens/elements';
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';

import { DATA } from '../shared/data.js';

function App() {
  const [query, setQuery] = useState(1);
  const [seen, setSeen] = useState('none');
  return h('main', null,
    h('button', { id: 'next', type: 'button', onClick: () => setQuery((q) => (q + 1) % DATA.tokens.length) }, 'Next query'),
    h('output', { id: 'seen' }, seen),
    h('attn-heatmap', { id: 'map', data: DATA, query, onchange: (e) => setSeen(`${e.detail.name}=${e.detail.value}`) }),
    h('attn-bars', { id: 'bars', data: DATA, query }));
}

createRoot(document.getElementById('app')).render(h(App));
