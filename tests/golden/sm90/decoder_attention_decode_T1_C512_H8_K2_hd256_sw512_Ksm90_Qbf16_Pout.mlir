!q = tensor<1x8x256xf32>
!q_in = tensor<1x8x256xbf16>
!kv = tensor<1x512x2x256xf32>
!scores = tensor<1x2x4x512xf32>
!stat = tensor<1x2x4xf32>
!mask = tensor<1x512xi1>
!pos = tensor<1x512xi32>
func.func private @decoder_attention_decode_T1_C512_H8_K2_hd256_sw512_Ksm90_Qbf16_Pout(%q: !q_in, %k_rows: tensor<2048x2x256xbf16>, %k_at: tensor<1x1xi32>, %v_rows: tensor<2048x2x256xbf16>, %v_at: tensor<1x1xi32>, %qpos: tensor<1xi32>) -> tensor<8x1x2048xf32> {
  %q_groups = stablehlo.reshape %q : (!q_in) -> tensor<1x2x4x256xbf16>
  %q_op = stablehlo.convert %q_groups : (tensor<1x2x4x256xbf16>) -> tensor<1x2x4x256xbf16>
  %scores_c0 = arith.constant 2 : i32
%scores_c1 = arith.constant 4 : i32
%scores_c2 = arith.constant 512 : i32
%scores = hal.dispatch.extern "decode_scores"(%q_op, %k_rows, %k_at, %scores_c0, %scores_c1, %scores_c2) : (tensor<1x2x4x256xbf16>, tensor<2048x2x256xbf16>, tensor<1x1xi32>, i32, i32, i32) -> !scores
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 16 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_scores_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 40960>
  %p_op_c0 = arith.constant 8 : i32
%p_op_c1 = arith.constant 512 : i32
%p_op_c2 = arith.constant 512 : i32
%p_op_c3 = arith.constant 1 : i32
%p_op_c4 = arith.constant -8454144 : i32
%p_op = hal.dispatch.extern "decode_softmax"(%scores, %qpos, %p_op_c0, %p_op_c1, %p_op_c2, %p_op_c3, %p_op_c4) : (!scores, tensor<1xi32>, i32, i32, i32, i32, i32) -> tensor<1x2x4x512xbf16>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 8 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_softmax_t128_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 512>
  %value_partials_c0 = arith.constant 2 : i32
%value_partials_c1 = arith.constant 4 : i32
%value_partials_c2 = arith.constant 512 : i32
%value_partials_c3 = arith.constant 8 : i32
%value_partials = hal.dispatch.extern "decode_values"(%p_op, %v_rows, %v_at, %value_partials_c0, %value_partials_c1, %value_partials_c2, %value_partials_c3) : (tensor<1x2x4x512xbf16>, tensor<2048x2x256xbf16>, tensor<1x1xi32>, i32, i32, i32, i32) -> tensor<8x1x2x4x256xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 16 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/decode_values_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 67584>
  %value_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %attended_raw = stablehlo.reduce(%value_partials init: %value_zero) applies stablehlo.add across dimensions = [0] : (tensor<8x1x2x4x256xf32>, tensor<f32>) -> tensor<1x2x4x256xf32>
  %out = stablehlo.reshape %value_partials : (tensor<8x1x2x4x256xf32>) -> tensor<8x1x2048xf32>
  return %out : tensor<8x1x2048xf32>
}
