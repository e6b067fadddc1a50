// model.safetensors.index.json of a sharded checkpoint (web/model/shards.js).

export interface ShardIndex {
  /** Shard file names in shard order (model-00001-of-00003 first), each a plain file name. */
  readonly files: readonly string[];
  /** Tensor name → the shard file holding it. */
  readonly weightMap: Map<string, string>;
  /** metadata.total_size (bytes of tensor data over all shards), or null. */
  readonly totalSize: number | null;
  /** The tensors weight_map puts in `file`. */
  tensorsIn(file: string): string[];
  /** Throws ModelFormatError unless `names` (a shard's header) are exactly the tensors mapped to `file`. */
  checkShard(file: string, names: readonly string[]): void;
}

export interface ShardIndexOptions {
  /** File name or URL that error messages give (default 'model.safetensors.index.json'). */
  name?: string;
  /** The file names beside the index (a folder listing): every shard must be one of them. */
  available?: readonly string[];
}

/** Throws ModelFormatError naming the index (not JSON, no weight_map, a tensor named twice, a file
 *  name with a folder or "..", a numbered shard missing, …), TypeError for a wrong argument type. */
export declare function parseShardIndex(
  index: Record<string, unknown> | string | ArrayBuffer | ArrayBufferView, options?: ShardIndexOptions): ShardIndex;
