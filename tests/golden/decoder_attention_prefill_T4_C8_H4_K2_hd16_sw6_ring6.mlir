!q = tensor<4x4x16xf32>
!kv = tensor<8x2x16xf32>
!scores = tensor<2x4x2x8xf32>
!stat = tensor<2x4x2xf32>
!mask = tensor<4x8xi1>
!pos = tensor<4x8xi32>
func.func private @decoder_attention_prefill_T4_C8_H4_K2_hd16_sw6_ring6(%q: !q, %k: !kv, %v: !kv, %qpos: tensor<4xi32>) -> !q {
  %q_groups = stablehlo.reshape %q : (!q) -> tensor<4x2x2x16xf32>
  %q_op = stablehlo.convert %q_groups : (tensor<4x2x2x16xf32>) -> tensor<4x2x2x16xbf16>
  %k_op = stablehlo.convert %k : (!kv) -> tensor<8x2x16xbf16>
  %scores = stablehlo.dot_general %q_op, %k_op, batching_dims = [1] x [1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x2x2x16xbf16>, tensor<8x2x16xbf16>) -> !scores
  %column = stablehlo.iota dim = 1 : !pos
  %p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<4xi32>) -> !pos
  %causal = stablehlo.compare LE, %column, %p, SIGNED : (!pos, !pos) -> !mask
  %w = stablehlo.constant dense<6> : !pos
  %oldest = stablehlo.subtract %p, %w : !pos
  %in_window = stablehlo.compare GT, %column, %oldest, SIGNED : (!pos, !pos) -> !mask
  %visible = stablehlo.and %causal, %in_window : !mask
  %visible_b = stablehlo.broadcast_in_dim %visible, dims = [1, 3] : (!mask) -> tensor<2x4x2x8xi1>
  %masked_value = stablehlo.constant dense<0xFF7F0000> : tensor<2x4x2x8xf32>
  %masked = stablehlo.select %visible_b, %scores, %masked_value : tensor<2x4x2x8xi1>, !scores
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%masked init: %lowest) applies stablehlo.maximum across dimensions = [3] : (!scores, tensor<f32>) -> !stat
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0, 1, 2] : (!stat) -> !scores
  %shifted = stablehlo.subtract %masked, %top_b : !scores
  %e = stablehlo.exponential %shifted : !scores
  %ring_column = stablehlo.iota dim = 1 : tensor<4x6xi32>
  %ring_p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<4xi32>) -> tensor<4x6xi32>
  %ring_w = stablehlo.constant dense<6> : tensor<4x6xi32>
  %ring_back = stablehlo.subtract %ring_p, %ring_column : tensor<4x6xi32>
  %ring_back_w = stablehlo.add %ring_back, %ring_w : tensor<4x6xi32>
  %ring_offset = stablehlo.remainder %ring_back_w, %ring_w : tensor<4x6xi32>
  %ring_position = stablehlo.subtract %ring_p, %ring_offset : tensor<4x6xi32>
  %ring_zero_i = stablehlo.constant dense<0> : tensor<4x6xi32>
  %ring_held = stablehlo.compare GE, %ring_position, %ring_zero_i, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
  %ring_index = stablehlo.maximum %ring_position, %ring_zero_i : tensor<4x6xi32>
  %ring_query = stablehlo.iota dim = 0 : tensor<4x6x1xi32>
  %ring_index_3d = stablehlo.reshape %ring_index : (tensor<4x6xi32>) -> tensor<4x6x1xi32>
  %ring_indices = stablehlo.concatenate %ring_query, %ring_index_3d, dim = 2 : (tensor<4x6x1xi32>, tensor<4x6x1xi32>) -> tensor<4x6x2xi32>
  %e_by_query = stablehlo.transpose %e, dims = [1, 3, 0, 2] : (!scores) -> tensor<4x8x2x2xf32>
  %e_by_column = stablehlo.reshape %e_by_query : (tensor<4x8x2x2xf32>) -> tensor<4x8x4xf32>
  %e_ring = "stablehlo.gather"(%e_by_column, %ring_indices) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 4>} : (tensor<4x8x4xf32>, tensor<4x6x2xi32>) -> tensor<4x6x4xf32>
  %ring_held_b = stablehlo.broadcast_in_dim %ring_held, dims = [0, 1] : (tensor<4x6xi1>) -> tensor<4x6x4xi1>
  %ring_zeros = stablehlo.constant dense<0.000000e+00> : tensor<4x6x4xf32>
  %e_ring_held = stablehlo.select %ring_held_b, %e_ring, %ring_zeros : tensor<4x6x4xi1>, tensor<4x6x4xf32>
  %e_ring_4d = stablehlo.reshape %e_ring_held : (tensor<4x6x4xf32>) -> tensor<4x6x2x2xf32>
  %e_ring_rows = stablehlo.transpose %e_ring_4d, dims = [2, 0, 3, 1] : (tensor<4x6x2x2xf32>) -> tensor<2x4x2x6xf32>
  %e_rows = stablehlo.reshape %e_ring_rows : (tensor<2x4x2x6xf32>) -> tensor<16x6xf32>
  %denominator_flat = func.call @lane_xor_sum_R16_W6_X4(%e_rows) : (tensor<16x6xf32>) -> (tensor<16xf32>)
  %denominator = stablehlo.reshape %denominator_flat : (tensor<16xf32>) -> !stat
  %denominator_b = stablehlo.broadcast_in_dim %denominator, dims = [0, 1, 2] : (!stat) -> !scores
  %probs_raw_a64 = stablehlo.convert %e : (tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf64>
  %probs_raw_b64 = stablehlo.convert %denominator_b : (tensor<2x4x2x8xf32>) -> tensor<2x4x2x8xf64>
  %probs_raw_64 = stablehlo.divide %probs_raw_a64, %probs_raw_b64 : tensor<2x4x2x8xf64>
  %probs_raw = stablehlo.convert %probs_raw_64 : (tensor<2x4x2x8xf64>) -> tensor<2x4x2x8xf32>
  %probs = stablehlo.reduce_precision %probs_raw, format = e8m7 : !scores
  %p_op = stablehlo.convert %probs : (!scores) -> tensor<2x4x2x8xbf16>
  %v_op = stablehlo.convert %v : (!kv) -> tensor<8x2x16xbf16>
  %attended_raw = stablehlo.dot_general %p_op, %v_op, batching_dims = [0] x [1], contracting_dims = [3] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x2x8xbf16>, tensor<8x2x16xbf16>) -> tensor<2x4x2x16xf32>
  %attended = stablehlo.reduce_precision %attended_raw, format = e8m7 : tensor<2x4x2x16xf32>
  %by_query = stablehlo.transpose %attended, dims = [1, 0, 2, 3] : (tensor<2x4x2x16xf32>) -> tensor<4x2x2x16xf32>
  %out = stablehlo.reshape %by_query : (tensor<4x2x2x16xf32>) -> !q
  return %out : !q
}
