!q = tensor<2x4x16xf32>
!q_in = tensor<2x4x16xf32>
!kv = tensor<2x6x2x16xf32>
!scores = tensor<2x2x2x6xf32>
!stat = tensor<2x2x2xf32>
!mask = tensor<2x6xi1>
!pos = tensor<2x6xi32>
func.func private @decoder_attention_decode_T2_C6_H4_K2_hd16_sw6(%q: !q_in, %k: !kv, %v: !kv, %qpos: tensor<2xi32>) -> tensor<2x4x16xf32> {
  %q_groups = stablehlo.reshape %q : (!q_in) -> tensor<2x2x2x16xf32>
  %q_op = stablehlo.convert %q_groups : (tensor<2x2x2x16xf32>) -> tensor<2x2x2x16xbf16>
  %k_op = stablehlo.convert %k : (!kv) -> tensor<2x6x2x16xbf16>
  %scores = stablehlo.dot_general %q_op, %k_op, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x2x2x16xbf16>, tensor<2x6x2x16xbf16>) -> !scores
  %column = stablehlo.iota dim = 1 : !pos
  %p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<2xi32>) -> !pos
  %w = stablehlo.constant dense<6> : !pos
  %back = stablehlo.subtract %p, %column : !pos
  %back_w = stablehlo.add %back, %w : !pos
  %offset = stablehlo.remainder %back_w, %w : !pos
  %held = stablehlo.subtract %p, %offset : !pos
  %zero_i = stablehlo.constant dense<0> : !pos
  %visible = stablehlo.compare GE, %held, %zero_i, SIGNED : (!pos, !pos) -> !mask
  %visible_b = stablehlo.broadcast_in_dim %visible, dims = [0, 3] : (!mask) -> tensor<2x2x2x6xi1>
  %masked_value = stablehlo.constant dense<0xFF7F0000> : tensor<2x2x2x6xf32>
  %masked = stablehlo.select %visible_b, %scores, %masked_value : tensor<2x2x2x6xi1>, !scores
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%masked init: %lowest) applies stablehlo.maximum across dimensions = [3] : (!scores, tensor<f32>) -> !stat
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0, 1, 2] : (!stat) -> !scores
  %shifted = stablehlo.subtract %masked, %top_b : !scores
  %e = stablehlo.exponential %shifted : !scores
%e_rows = stablehlo.reshape %e : (!scores) -> tensor<8x6xf32>
  %denominator_flat = func.call @lane_xor_sum_R8_W6_X4(%e_rows) : (tensor<8x6xf32>) -> (tensor<8xf32>)
  %denominator = stablehlo.reshape %denominator_flat : (tensor<8xf32>) -> !stat
  %denominator_b = stablehlo.broadcast_in_dim %denominator, dims = [0, 1, 2] : (!stat) -> !scores
  %probs_raw_a64 = stablehlo.convert %e : (tensor<2x2x2x6xf32>) -> tensor<2x2x2x6xf64>
  %probs_raw_b64 = stablehlo.convert %denominator_b : (tensor<2x2x2x6xf32>) -> tensor<2x2x2x6xf64>
  %probs_raw_64 = stablehlo.divide %probs_raw_a64, %probs_raw_b64 : tensor<2x2x2x6xf64>
  %probs_raw = stablehlo.convert %probs_raw_64 : (tensor<2x2x2x6xf64>) -> tensor<2x2x2x6xf32>
  %probs = stablehlo.reduce_precision %probs_raw, format = e8m7 : !scores
  %p_op = stablehlo.convert %probs : (!scores) -> tensor<2x2x2x6xbf16>
  %v_op = stablehlo.convert %v : (!kv) -> tensor<2x6x2x16xbf16>
  %attended_raw = stablehlo.dot_general %p_op, %v_op, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x2x2x6xbf16>, tensor<2x6x2x16xbf16>) -> tensor<2x2x2x16xf32>
  %attended = stablehlo.reduce_precision %attended_raw, format = e8m7 : tensor<2x2x2x16xf32>
  %out = stablehlo.reshape %attended : (tensor<2x2x2x16xf32>) -> !q
  return %out : !q
}
