!q = tensor<2x8x256xbf16>
!rows = tensor<16x256xbf16>
!t = tensor<2x256xf32>
!partials = tensor<16x2x2048xf32>
!parts = tensor<16x16x256xf32>
func.func private @query_projection_T2_D2048_H8_hd256_Xbf16_P16(%q_partials: !partials, %w_norm: tensor<256xbf16>, %cos: !t, %sin: !t) -> !q {
  %parts = stablehlo.reshape %q_partials : (!partials) -> !parts
  %rows_c0 = arith.constant 16 : i32
%rows_c1 = arith.constant 256 : i32
%rows_c2 = arith.constant 16 : i32
%rows_c3 = arith.constant 8 : i32
%rows_c4 = arith.constant 897988541 : i32
%rows_c5 = arith.constant 1 : i32
%rows_c6 = arith.constant 1 : i32
%rows_c7 = arith.constant 1 : i32
%rows_c8 = arith.constant 1 : i32
%rows = hal.dispatch.extern "rms_norm_partials_kv"(%parts, %w_norm, %cos, %sin, %rows_c0, %rows_c1, %rows_c2, %rows_c3, %rows_c4, %rows_c5, %rows_c6, %rows_c7, %rows_c8) : (!parts, tensor<256xbf16>, !t, !t, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_keys_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 8192>
  %q = stablehlo.reshape %rows : (!rows) -> !q
  return %q : !q
}
