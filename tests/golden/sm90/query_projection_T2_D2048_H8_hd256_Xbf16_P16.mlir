!q = tensor<2x8x256xf32>
!rows = tensor<16x256xf32>
!t = tensor<2x256xf32>
!partials = tensor<16x2x2048xf32>
!parts = tensor<16x16x256xf32>
func.func private @query_projection_T2_D2048_H8_hd256_Xbf16_P16(%q_partials: !partials, %w_norm: tensor<256xbf16>, %cos: !t, %sin: !t) -> !q {
  %parts = stablehlo.reshape %q_partials : (!partials) -> !parts
  %normed_c0 = arith.constant 16 : i32
%normed_c1 = arith.constant 256 : i32
%normed_c2 = arith.constant 16 : i32
%normed_c3 = arith.constant 897988541 : i32
%normed_c4 = arith.constant 1 : i32
%normed = hal.dispatch.extern "rms_norm_partials"(%parts, %w_norm, %normed_c0, %normed_c1, %normed_c2, %normed_c3, %normed_c4) : (!parts, tensor<256xbf16>, i32, i32, i32, i32, i32) -> !rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>
  %heads = stablehlo.reshape %normed : (!rows) -> !q
  %q = func.call @rope_T2_H8_hd256(%heads, %cos, %sin) : (tensor<2x8x256xf32>, tensor<2x256xf32>, tensor<2x256xf32>) -> (tensor<2x8x256xf32>)
  return %q : !q
}
