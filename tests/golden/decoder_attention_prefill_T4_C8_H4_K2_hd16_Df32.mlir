!q = tensor<4x4x16xf32>
!kv = tensor<8x2x16xf32>
!scores = tensor<2x4x2x8xf32>
!stat = tensor<2x4x2xf32>
!mask = tensor<4x8xi1>
!pos = tensor<4x8xi32>
func.func private @decoder_attention_prefill_T4_C8_H4_K2_hd16_Df32(%q: !q, %k: !kv, %v: !kv, %qpos: tensor<4xi32>) -> !q {
  %q_groups = stablehlo.reshape %q : (!q) -> tensor<4x2x2x16xf32>
  %q_op = stablehlo.reduce_precision %q_groups, format = e8m7 : tensor<4x2x2x16xf32>
  %k_op = stablehlo.reduce_precision %k, format = e8m7 : tensor<8x2x16xf32>
  %scores = stablehlo.dot_general %q_op, %k_op, batching_dims = [1] x [1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x2x2x16xf32>, tensor<8x2x16xf32>) -> !scores
  %column = stablehlo.iota dim = 1 : !pos
  %p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<4xi32>) -> !pos
  %causal = stablehlo.compare LE, %column, %p, SIGNED : (!pos, !pos) -> !mask
  %visible = stablehlo.reshape %causal : (!mask) -> !mask
  %visible_b = stablehlo.broadcast_in_dim %visible, dims = [1, 3] : (!mask) -> tensor<2x4x2x8xi1>
  %masked_value = stablehlo.constant dense<0xFF7F0000> : tensor<2x4x2x8xf32>
  %masked = stablehlo.select %visible_b, %scores, %masked_value : tensor<2x4x2x8xi1>, !scores
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%masked init: %lowest) applies stablehlo.maximum across dimensions = [3] : (!scores, tensor<f32>) -> !stat
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0, 1, 2] : (!stat) -> !scores
  %shifted = stablehlo.subtract %masked, %top_b : !scores
  %e = stablehlo.exponential %shifted : !scores
%e_rows = stablehlo.reshape %e : (!scores) -> tensor<16x8xf32>
  %denominator_flat = func.call @lane_xor_sum_R16_W8_X4(%e_rows) : (tensor<16x8xf32>) -> (tensor<16xf32>)
  %denominator = stablehlo.reshape %denominator_flat : (tensor<16xf32>) -> !stat
  %denominator_b = stablehlo.broadcast_in_dim %denominator, dims = [0, 1, 2] : (!stat) -> !scores
  %probs_raw_a64 = stablehlo.convert %e : (tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf64>
  %probs_raw_b64 = stablehlo.convert %denominator_b : (tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf64>
  %probs_raw_64 = stablehlo.divide %probs_raw_a64, %probs_raw_b64 : tensor<2x4x2x8xf64>
  %probs_raw = stablehlo.convert %probs_raw_64 : (tensor<2x4x2x8xf64>) -> tensor<2x4x2x8xf32>
  %probs = stablehlo.reduce_precision %probs_raw, format = e8m7 : !scores
  %p_op = stablehlo.reduce_precision %probs, format = e8m7 : tensor<2x4x2x8xf32>
  %v_op = stablehlo.reduce_precision %v, format = e8m7 : tensor<8x2x16xf32>
  %attended_raw = stablehlo.dot_general %p_op, %v_op, batching_dims = [0] x [1], contracting_dims = [3] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x2x8xf32>, tensor<8x2x16xf32>) -> tensor<2x4x2x16xf32>
  %attended = stablehlo.reduce_precision %attended_raw, format = e8m7 : tensor<2x4x2x16xf32>
  %by_query = stablehlo.transpose %attended, dims = [1, 0, 2, 3] : (tensor<2x4x2x16xf32>) -> tensor<4x2x2x16xf32>
  %out = stablehlo.reshape %by_query : (tensor<4x2x2x16xf32>) -> !q
  return %out : !q
}
