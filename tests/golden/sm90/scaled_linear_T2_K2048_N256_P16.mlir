!x = tensor<2x2048xf32>
!w = tensor<256x2048xbf16>
!s = tensor<2048xbf16>
!partials = tensor<16x2x256xf32>
func.func private @scaled_linear_T2_K2048_N256_P16(%x: !x, %s: !s, %w: !w) -> tensor<2x256xf32> {
  %partials_c0 = arith.constant 2 : i32
%partials_c1 = arith.constant 256 : i32
%partials_c2 = arith.constant 2048 : i32
%partials_c3 = arith.constant 16 : i32
%partials_c4 = arith.constant 1 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_scaled_splitk"(%x, %s, %w, %partials_c0, %partials_c1, %partials_c2, %partials_c3, %partials_c4) : (!x, !s, !w, i32, i32, i32, i32, i32) -> !partials
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 64 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_scaled_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 36864>
  %y = func.call @partials_sum_P16_T2_N256(%partials) : (tensor<16x2x256xf32>) -> (tensor<2x256xf32>)
  return %y : tensor<2x256xf32>
}
