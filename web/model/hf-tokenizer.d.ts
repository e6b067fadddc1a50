// A Hugging Face tokenizer.json (+ optional tokenizer_config.json) as a tokenizer; ids from
// Hugging Face's own @huggingface/tokenizers (shipped as web/dist/hf-tokenizers.mjs).

/** The contents of a JSON file: the parsed object, its text, or its UTF-8 bytes. */
export type JsonFile = Record<string, unknown> | string | ArrayBuffer | ArrayBufferView;

export interface HfTokenizerFiles {
  /** tokenizer.json. */
  tokenizer: JsonFile;
  /** tokenizer_config.json (special-token names, clean_up_tokenization_spaces, …). */
  tokenizerConfig?: JsonFile | null;
  /** File names or URLs that error messages give (default 'tokenizer.json', 'tokenizer_config.json'). */
  names?: { tokenizer?: string; tokenizerConfig?: string };
}

export interface HfEncodeOptions {
  /** A second text (BERT's sentence B: its tokens get type id 1). */
  pair?: string | null;
  /** Add the post-processor's special tokens ([CLS] … [SEP], <s>); default true. */
  addSpecialTokens?: boolean;
}

export interface HfDecodeOptions {
  /** Leave out special tokens ([CLS], <s>, <|endoftext|>); default false. */
  skipSpecialTokens?: boolean;
}

export interface HfEncoding {
  ids: Int32Array;
  /** Readable tokens, one per id (see HfTokenizer.token()). */
  tokens: string[];
  /** Token type (segment) ids: 0, and 1 for a pair's second text where the post-processor says so. */
  typeIds: Int32Array;
}

/** Special-token ids, null where the tokenizer has none. */
export interface HfSpecialTokens {
  bos: number | null;
  eos: number | null;
  pad: number | null;
  mask: number | null;
  cls: number | null;
  sep: number | null;
  unk: number | null;
}

export type HfTokenizerKind = 'bpe' | 'wordpiece' | 'unigram';

export declare class HfTokenizer {
  private constructor();
  /** The tokenizer.json model. */
  readonly kind: HfTokenizerKind;
  /** Number of ids (0 … vocabSize - 1), added tokens included. */
  readonly vocabSize: number;
  /** From tokenizer_config.json, the post-processor, the model's unk_token and the added tokens. */
  readonly special: Readonly<HfSpecialTokens>;
  /** Throws ModelFormatError if the tokenizer.json fails on the text, TypeError for a wrong argument. */
  encode(text: string, options?: HfEncodeOptions): HfEncoding;
  decode(ids: Int32Array | Uint32Array | Uint16Array | readonly number[], options?: HfDecodeOptions): string;
  /** Readable text of one token: ` world` for `Ġworld` / `▁world`, `<0xHH>` for each byte that is
   *  not part of a whole UTF-8 character, `##ing` kept, special tokens as written. */
  token(id: number): string;
  /** The vocabulary's own string for an id (`Ġworld`, `▁world`, `##ing`). */
  piece(id: number): string;
  /** The id of a vocabulary string, or null. */
  id(piece: string): number | null;
}

/** The model types accepted: 'BPE', 'WordPiece', 'Unigram'. */
export declare const SUPPORTED_MODELS: readonly string[];

/** Rejects with ModelFormatError (naming the file: not JSON, not a tokenizer.json, a model type not
 *  supported, …) or TypeError (an argument of the wrong type). */
export declare function loadHfTokenizer(files: HfTokenizerFiles): Promise<HfTokenizer>;
