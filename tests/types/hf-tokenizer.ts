// tokenizer.json as a tokenizer: `attnlens/hf-tokenizer`.
import { loadHfTokenizer, SUPPORTED_MODELS, type HfEncoding, type HfTokenizer } from 'attnlens/hf-tokenizer';

const tok: HfTokenizer = await loadHfTokenizer({ tokenizer: '{"model":{}}', tokenizerConfig: { bos_token: '<s>' },
  names: { tokenizer: 'models/gpt2/tokenizer.json' } });
const fromBytes: HfTokenizer = await loadHfTokenizer({ tokenizer: new Uint8Array(2), tokenizerConfig: null });
const e: HfEncoding = tok.encode('Hello', { pair: 'world', addSpecialTokens: false });
const ids: Int32Array = e.ids;
const types: Int32Array = e.typeIds;
const text: string = tok.decode(ids, { skipSpecialTokens: true }) + tok.decode([1, 2]) + tok.token(0) + tok.piece(0);
const found: number | null = tok.id('Ġworld');
const cls: number | null = tok.special.cls;
const kind: 'bpe' | 'wordpiece' | 'unigram' = tok.kind;
const size: number = tok.vocabSize + SUPPORTED_MODELS.length + fromBytes.vocabSize;
void [text, found, cls, kind, size, types];

// @ts-expect-error the tokenizer file is required
await loadHfTokenizer({ tokenizerConfig: {} });
// @ts-expect-error a number is not a tokenizer.json
await loadHfTokenizer({ tokenizer: 42 });
// @ts-expect-error encode takes text, not ids
tok.encode([1, 2]);
// @ts-expect-error special is read-only
tok.special.bos = 3;
// @ts-expect-error the option is addSpecialTokens
tok.encode('x', { add_special_tokens: false });
