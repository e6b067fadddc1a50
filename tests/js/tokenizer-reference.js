// An independent plain-JavaScript tokenizer for the golden tests: the reference algorithm of
// the model's own tokenizer (tfjs-models' universal-sentence-encoder, as packaged by
// @energetic-ai/embeddings), written from its description: String.normalize('NFKC'), '▁' before
// the text and for every space, a trie of the pieces with ids ≥ 6, Viterbi by best total
// score visited end by end and start by start (a later candidate wins ties; a best of exactly 0
// counts as unset), an unknown character scoring 0 with id 0, the backward pass stepping by
// each piece's JavaScript length, and runs of unknowns merged.
const RESERVED = 6;
const MARK = '\u2581';

export class ReferenceTokenizer {
  /** @param {Array<[string, number|null]>} vocab the parsed vocab.json */
  constructor(vocab) {
    this.vocab = vocab;
    this.root = new Map();
    for (let id = RESERVED; id < vocab.length; id++) {
      let node = { children: this.root };
      for (const ch of vocab[id][0]) {
        if (!node.children.has(ch)) node.children.set(ch, { children: new Map(), end: null });
        node = node.children.get(ch);
      }
      node.end = { length: [...vocab[id][0]].length, score: vocab[id][1], id };
    }
  }

  /** Every id, unclipped. */
  encode(text) {
    const normalised = text.normalize('NFKC');
    if (normalised.length === 0) return [];
    const symbols = [...(MARK + normalised.replaceAll(' ', MARK))];
    const n = symbols.length;
    // lattice[end] = candidates ending there, in order of their start.
    const lattice = Array.from({ length: n + 1 }, () => []);
    for (let start = 0; start < n; start++) {
      const found = [];
      let children = this.root;
      for (let end = start; end < n; end++) {
        const node = children.get(symbols[end]);
        if (!node) break;
        if (node.end) found.push(node.end);
        children = node.children;
      }
      if (found.length === 0) found.push({ length: 1, score: 0, id: 0 });
      for (const f of found) lattice[start + f.length].push(f);
    }
    const best = new Array(n + 1).fill(0);
    const words = new Array(n + 1).fill(0);
    for (let end = 0; end <= n; end++) {
      for (const c of lattice[end]) {  // starts ascend: lattice was filled start by start
        const score = c.score + best[end - c.length];
        if (best[end] === 0 || score >= best[end]) {
          best[end] = score;
          words[end] = c.id;
        }
      }
    }
    const ids = [];
    for (let at = n; at > 0; at -= this.vocab[words[at]][0].length) ids.push(words[at]);
    const merged = ids.filter((id, i) => !(id === 0 && i > 0 && ids[i - 1] === 0));
    return merged.reverse();
  }
}
