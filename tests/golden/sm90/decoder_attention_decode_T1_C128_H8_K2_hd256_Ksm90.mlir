!q = tensor<1x8x256xf32>
!kv = tensor<1x128x2x256xf32>
!scores = tensor<1x2x4x128xf32>
!stat = tensor<1x2x4xf32>
!mask = tensor<1x128xi1>
!pos = tensor<1x128xi32>
func.func private @decoder_attention_decode_T1_C128_H8_K2_hd256_Ksm90(%q: !q, %k_rows: tensor<2048x2x256xbf16>, %k_at: tensor<1x1xi32>, %v_rows: tensor<2048x2x256xbf16>, %v_at: tensor<1x1xi32>, %qpos: tensor<1xi32>) -> !q {
  %q_groups = stablehlo.reshape %q : (!q) -> tensor<1x2x4x256xf32>
  %q_op = stablehlo.convert %q_groups : (tensor<1x2x4x256xf32>) -> tensor<1x2x4x256xbf16>
  %scores_c0 = arith.constant 2 : i32
%scores_c1 = arith.constant 4 : i32
%scores_c2 = arith.constant 128 : i32
%scores = hal.dispatch.extern "decode_scores"(%q_op, %k_rows, %k_at, %scores_c0, %scores_c1, %scores_c2) : (tensor<1x2x4x256xbf16>, tensor<2048x2x256xbf16>, tensor<1x1xi32>, i32, i32, i32) -> !scores
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 4 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_scores_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 40960>
  %column = stablehlo.iota dim = 1 : !pos
  %p = stablehlo.broadcast_in_dim %qpos, dims = [0] : (tensor<1xi32>) -> !pos
  %visible = stablehlo.compare LE, %column, %p, SIGNED : (!pos, !pos) -> !mask
  %visible_b = stablehlo.broadcast_in_dim %visible, dims = [0, 3] : (!mask) -> tensor<1x2x4x128xi1>
  %masked_value = stablehlo.constant dense<0xFF7F0000> : tensor<1x2x4x128xf32>
  %masked = stablehlo.select %visible_b, %scores, %masked_value : tensor<1x2x4x128xi1>, !scores
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%masked init: %lowest) applies stablehlo.maximum across dimensions = [3] : (!scores, tensor<f32>) -> !stat
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0, 1, 2] : (!stat) -> !scores
  %shifted = stablehlo.subtract %masked, %top_b : !scores
  %e = stablehlo.exponential %shifted : !scores
%e_rows = stablehlo.reshape %e : (!scores) -> tensor<8x128xf32>
  %denominator_flat = func.call @lane_xor_sum_R8_W128_X4_Ksm90(%e_rows) : (tensor<8x128xf32>) -> (tensor<8xf32>)
  %denominator = stablehlo.reshape %denominator_flat : (tensor<8xf32>) -> !stat
  %denominator_b = stablehlo.broadcast_in_dim %denominator, dims = [0, 1, 2] : (!stat) -> !scores
  %probs_raw_a64 = stablehlo.convert %e : (tensor<1x2x4x128xf32>) -> tensor<1x2x4x128xf64>
  %probs_raw_b64 = stablehlo.convert %denominator_b : (tensor<1x2x4x128xf32>) -> tensor<1x2x4x128xf64>
  %probs_raw_64 = stablehlo.divide %probs_raw_a64, %probs_raw_b64 : tensor<1x2x4x128xf64>
  %probs_raw = stablehlo.convert %probs_raw_64 : (tensor<1x2x4x128xf64>) -> tensor<1x2x4x128xf32>
  %probs = stablehlo.reduce_precision %probs_raw, format = e8m7 : !scores
  %p_op = stablehlo.convert %probs : (!scores) -> tensor<1x2x4x128xbf16>
  %value_partials_c0 = arith.constant 2 : i32
%value_partials_c1 = arith.constant 4 : i32
%value_partials_c2 = arith.constant 128 : i32
%value_partials_c3 = arith.constant 2 : i32
%value_partials = hal.dispatch.extern "decode_values"(%p_op, %v_rows, %v_at, %value_partials_c0, %value_partials_c1, %value_partials_c2, %value_partials_c3) : (tensor<1x2x4x128xbf16>, tensor<2048x2x256xbf16>, tensor<1x1xi32>, i32, i32, i32, i32) -> tensor<2x1x2x4x256xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 4 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_values_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 67584>
  %value_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %attended_raw = stablehlo.reduce(%value_partials init: %value_zero) applies stablehlo.add across dimensions = [0] : (tensor<2x1x2x4x256xf32>, tensor<f32>) -> tensor<1x2x4x256xf32>
  %attended = stablehlo.reduce_precision %attended_raw, format = e8m7 : tensor<1x2x4x256xf32>
  %out = stablehlo.reshape %attended : (tensor<1x2x4x256xf32>) -> !q
  return %out : !q
}
