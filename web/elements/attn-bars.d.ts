// <attn-bars>: one query token, one bar per key token. Importing this module registers it.
import { AttnElement } from './lib/base.js';

export declare class AttnBars extends AttnElement {
  /** The current query's weights over the keys. */
  readonly row: Float32Array | null;
  /** Whether the query is being scanned across the tokens. */
  readonly scanning: boolean;
  startScan(): void;
  stop(): void;
  toggleScan(): void;
}

declare global {
  interface HTMLElementTagNameMap { 'attn-bars': AttnBars; }
}
