!q = tensor<1x8x256xf32>
!kv = tensor<256x2x256xf32>
!scores = tensor<2x1x4x256xf32>
!stat = tensor<2x1x4xf32>
!mask = tensor<1x256xi1>
!pos = tensor<1x256xi32>
func.func private @decoder_attention_prefill_T1_C256_H8_K2_hd256_sw512_ring512_Ksm90(%q: !q, %k: !kv, %v: !kv, %qpos: tensor<1xi32>) -> !q {
  %q_groups = stablehlo.reshape %q : (!q) -> tensor<1x2x4x256xf32>
  %q_op = stablehlo.convert %q_groups : (tensor<1x2x4x256xf32>) -> tensor<1x2x4x256xbf16>
  %k_row = stablehlo.reshape %k : (!kv) -> tensor<1x256x2x256xf32>
  %k_op = stablehlo.convert %k_row : (tensor<1x256x2x256xf32>) -> tensor<1x256x2x256xbf16>
  %k_first = stablehlo.constant dense<0> : tensor<1xi32>
  %row_scores_c0 = arith.constant 2 : i32
%row_scores_c1 = arith.constant 4 : i32
%row_scores_c2 = arith.constant 256 : i32
%row_scores = hal.dispatch.extern "decode_scores"(%q_op, %k_op, %k_first, %row_scores_c0, %row_scores_c1, %row_scores_c2) : (tensor<1x2x4x256xbf16>, tensor<1x256x2x256xbf16>, tensor<1xi32>, i32, i32, i32) -> tensor<1x2x4x256xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 8 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_scores_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 40960>
  %scores = stablehlo.reshape %row_scores : (tensor<1x2x4x256xf32>) -> !scores
  %column = stablehlo.iota dim = 1 : !pos
  %p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<1xi32>) -> !pos
  %causal = stablehlo.compare LE, %column, %p, SIGNED : (!pos, !pos) -> !mask
  %w = stablehlo.constant dense<512> : !pos
  %oldest = stablehlo.subtract %p, %w : !pos
  %in_window = stablehlo.compare GT, %column, %oldest, SIGNED : (!pos, !pos) -> !mask
  %visible = stablehlo.and %causal, %in_window : !mask
  %visible_b = stablehlo.broadcast_in_dim %visible, dims = [1, 3] : (!mask) -> tensor<2x1x4x256xi1>
  %masked_value = stablehlo.constant dense<0xFF7F0000> : tensor<2x1x4x256xf32>
  %masked = stablehlo.select %visible_b, %scores, %masked_value : tensor<2x1x4x256xi1>, !scores
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%masked init: %lowest) applies stablehlo.maximum across dimensions = [3] : (!scores, tensor<f32>) -> !stat
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0, 1, 2] : (!stat) -> !scores
  %shifted = stablehlo.subtract %masked, %top_b : !scores
  %e = stablehlo.exponential %shifted : !scores
  %ring_column = stablehlo.iota dim = 1 : tensor<1x512xi32>
  %ring_p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<1xi32>) -> tensor<1x512xi32>
  %ring_w = stablehlo.constant dense<512> : tensor<1x512xi32>
  %ring_back = stablehlo.subtract %ring_p, %ring_column : tensor<1x512xi32>
  %ring_back_w = stablehlo.add %ring_back, %ring_w : tensor<1x512xi32>
  %ring_offset = stablehlo.remainder %ring_back_w, %ring_w : tensor<1x512xi32>
  %ring_position = stablehlo.subtract %ring_p, %ring_offset : tensor<1x512xi32>
  %ring_zero_i = stablehlo.constant dense<0> : tensor<1x512xi32>
  %ring_held = stablehlo.compare GE, %ring_position, %ring_zero_i, SIGNED : (tensor<1x512xi32>, tensor<1x512xi32>) -> tensor<1x512xi1>
  %ring_index = stablehlo.maximum %ring_position, %ring_zero_i : tensor<1x512xi32>
  %ring_query = stablehlo.iota dim = 0 : tensor<1x512x1xi32>
  %ring_index_3d = stablehlo.reshape %ring_index : (tensor<1x512xi32>) -> tensor<1x512x1xi32>
  %ring_indices = stablehlo.concatenate %ring_query, %ring_index_3d, dim = 2 : (tensor<1x512x1xi32>, tensor<1x512x1xi32>) -> tensor<1x512x2xi32>
  %e_by_query = stablehlo.transpose %e, dims = [1, 3, 0, 2] : (!scores) -> tensor<1x256x2x4xf32>
  %e_by_column = stablehlo.reshape %e_by_query : (tensor<1x256x2x4xf32>) -> tensor<1x256x8xf32>
  %e_ring = "stablehlo.gather"(%e_by_column, %ring_indices) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 8>} : (tensor<1x256x8xf32>, tensor<1x512x2xi32>) -> tensor<1x512x8xf32>
  %ring_held_b = stablehlo.broadcast_in_dim %ring_held, dims = [0, 1] : (tensor<1x512xi1>) -> tensor<1x512x8xi1>
  %ring_zeros = stablehlo.constant dense<0.000000e+00> : tensor<1x512x8xf32>
  %e_ring_held = stablehlo.select %ring_held_b, %e_ring, %ring_zeros : tensor<1x512x8xi1>, tensor<1x512x8xf32>
  %e_ring_4d = stablehlo.reshape %e_ring_held : (tensor<1x512x8xf32>) -> tensor<1x512x2x4xf32>
  %e_ring_rows = stablehlo.transpose %e_ring_4d, dims = [2, 0, 3, 1] : (tensor<1x512x2x4xf32>) -> tensor<2x1x4x512xf32>
  %e_rows = stablehlo.reshape %e_ring_rows : (tensor<2x1x4x512xf32>) -> tensor<8x512xf32>
  %denominator_flat = func.call @lane_xor_sum_R8_W512_X4_Ksm90(%e_rows) : (tensor<8x512xf32>) -> (tensor<8xf32>)
  %denominator = stablehlo.reshape %denominator_flat : (tensor<8xf32>) -> !stat
  %denominator_b = stablehlo.broadcast_in_dim %denominator, dims = [0, 1, 2] : (!stat) -> !scores
  %probs_raw_a64 = stablehlo.convert %e : (tensor<2x1x4x256xf32>) -> tensor<2x1x4x256xf64>
  %probs_raw_b64 = stablehlo.convert %denominator_b : (tensor<2x1x4x256xf32>) -> tensor<2x1x4x256xf64>
  %probs_raw_64 = stablehlo.divide %probs_raw_a64, %probs_raw_b64 : tensor<2x1x4x256xf64>
  %probs_raw = stablehlo.convert %probs_raw_64 : (tensor<2x1x4x256xf64>) -> tensor<2x1x4x256xf32>
  %probs = stablehlo.reduce_precision %probs_raw, format = e8m7 : !scores
  %p_row = stablehlo.reshape %probs : (!scores) -> tensor<1x2x4x256xf32>
  %p_op = stablehlo.convert %p_row : (tensor<1x2x4x256xf32>) -> tensor<1x2x4x256xbf16>
  %v_row = stablehlo.reshape %v : (!kv) -> tensor<1x256x2x256xf32>
  %v_op = stablehlo.convert %v_row : (tensor<1x256x2x256xf32>) -> tensor<1x256x2x256xbf16>
  %v_first = stablehlo.constant dense<0> : tensor<1xi32>
  %value_partials_c0 = arith.constant 2 : i32
%value_partials_c1 = arith.constant 4 : i32
%value_partials_c2 = arith.constant 256 : i32
%value_partials_c3 = arith.constant 4 : i32
%value_partials = hal.dispatch.extern "decode_values"(%p_op, %v_op, %v_first, %value_partials_c0, %value_partials_c1, %value_partials_c2, %value_partials_c3) : (tensor<1x2x4x256xbf16>, tensor<1x256x2x256xbf16>, tensor<1xi32>, i32, i32, i32, i32) -> tensor<4x1x2x4x256xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 8 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_values_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 67584>
  %value_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %attended_row = stablehlo.reduce(%value_partials init: %value_zero) applies stablehlo.add across dimensions = [0] : (tensor<4x1x2x4x256xf32>, tensor<f32>) -> tensor<1x2x4x256xf32>
  %attended_raw = stablehlo.reshape %attended_row : (tensor<1x2x4x256xf32>) -> tensor<2x1x4x256xf32>
  %attended = stablehlo.reduce_precision %attended_raw, format = e8m7 : tensor<2x1x4x256xf32>
  %by_query = stablehlo.transpose %attended, dims = [1, 0, 2, 3] : (tensor<2x1x4x256xf32>) -> tensor<1x2x4x256xf32>
  %out = stablehlo.reshape %by_query : (tensor<1x2x4x256xf32>) -> !q
  return %out : !q
}
