// How the figures name what they show: one head, an aggregate over heads, or the rollout.

/** "layer 2, head 3", "layer 2, mean of 12 heads", "layer 2, max over 12 heads", "rollout of 6 layers". */
export function selectionLabel(result, layer, head) {
  if (layer === 'rollout') return `attention rollout of ${result.layers} layer${result.layers === 1 ? '' : 's'}`;
  const l = `layer ${layer + 1}`;
  if (head === 'mean') return `${l}, mean of ${result.heads} heads`;
  if (head === 'max') return `${l}, max over ${result.heads} heads`;
  return `${l}, head ${head + 1}`;
}

/** What a row adds up to: 'max' rows do not sum to 1 (the legends say so). */
export function rowSumNote(layer, head) {
  if (layer === 'rollout') return 'rollout rows add up to 1';
  if (head === 'max') return 'element-wise, so rows do not add up to 1';
  return 'the weights add up to 1';
}
