!t = tensor<2x256xf32>
!partials = tensor<16x2x512xf32>
!parts = tensor<16x4x256xf32>
!rows = tensor<4x256xbf16>
!kv = tensor<2x2x256xbf16>
func.func private @key_value_projection_T2_D2048_K2_hd256_Xbf16_Cbf16_P16(%k_partials: !partials, %v_partials: !partials, %w_norm: tensor<256xbf16>, %cos: !t, %sin: !t) -> (!kv, !kv) {
  %ones = stablehlo.constant dense<1.000000e+00> : tensor<256xbf16>
  %k_parts = stablehlo.reshape %k_partials : (!partials) -> !parts
  %k_rows_c0 = arith.constant 4 : i32
%k_rows_c1 = arith.constant 256 : i32
%k_rows_c2 = arith.constant 16 : i32
%k_rows_c3 = arith.constant 2 : i32
%k_rows_c4 = arith.constant 897988541 : i32
%k_rows_c5 = arith.constant 1 : i32
%k_rows_c6 = arith.constant 1 : i32
%k_rows_c7 = arith.constant 1 : i32
%k_rows_c8 = arith.constant 1 : i32
%k_rows = hal.dispatch.extern "rms_norm_partials_kv"(%k_parts, %w_norm, %cos, %sin, %k_rows_c0, %k_rows_c1, %k_rows_c2, %k_rows_c3, %k_rows_c4, %k_rows_c5, %k_rows_c6, %k_rows_c7, %k_rows_c8) : (!parts, tensor<256xbf16>, !t, !t, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_keys_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 8192>
  %k = stablehlo.reshape %k_rows : (!rows) -> !kv
  %v_parts = stablehlo.reshape %v_partials : (!partials) -> !parts
  %v_rows_c0 = arith.constant 4 : i32
%v_rows_c1 = arith.constant 256 : i32
%v_rows_c2 = arith.constant 16 : i32
%v_rows_c3 = arith.constant 2 : i32
%v_rows_c4 = arith.constant 897988541 : i32
%v_rows_c5 = arith.constant 1 : i32
%v_rows_c6 = arith.constant 1 : i32
%v_rows_c7 = arith.constant 1 : i32
%v_rows_c8 = arith.constant 1 : i32
%v_rows = hal.dispatch.extern "rms_norm_partials_kv"(%v_parts, %ones, %cos, %sin, %v_rows_c0, %v_rows_c1, %v_rows_c2, %v_rows_c3, %v_rows_c4, %v_rows_c5, %v_rows_c6, %v_rows_c7, %v_rows_c8) : (!parts, tensor<256xbf16>, !t, !t, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_values_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>
  %v = stablehlo.reshape %v_rows : (!rows) -> !kv
  return %k, %v : !kv, !kv
}
