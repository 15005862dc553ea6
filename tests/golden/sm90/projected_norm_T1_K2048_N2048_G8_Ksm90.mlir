!x = tensor<1x2048xf32>
!x_op = tensor<1x2048xbf16>
!w = tensor<2048x2048xbf16>
!w_op = tensor<2048x2048xbf16>
!partials = tensor<16x1x2048xf32>
!parts = tensor<16x8x256xf32>
!rows = tensor<8x256xf32>
func.func private @projected_norm_T1_K2048_N2048_G8_Ksm90(%x: !x, %w: !w, %w_norm: tensor<256xbf16>) -> !rows {
  %lhs = stablehlo.convert %x : (!x) -> !x_op
  %rhs = stablehlo.convert %w : (!w) -> !w_op
  %partials_c0 = arith.constant 1 : i32
%partials_c1 = arith.constant 2048 : i32
%partials_c2 = arith.constant 2048 : i32
%partials_c3 = arith.constant 16 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_splitk"(%lhs, %rhs, %partials_c0, %partials_c1, %partials_c2, %partials_c3) : (!x_op, !w_op, i32, i32, i32, i32) -> !partials
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 512 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %parts = stablehlo.reshape %partials : (!partials) -> !parts
  %normed_c0 = arith.constant 8 : i32
%normed_c1 = arith.constant 256 : i32
%normed_c2 = arith.constant 16 : i32
%normed_c3 = arith.constant 897988541 : i32
%normed_c4 = arith.constant 1 : i32
%normed = hal.dispatch.extern "rms_norm_partials"(%parts, %w_norm, %normed_c0, %normed_c1, %normed_c2, %normed_c3, %normed_c4) : (!parts, tensor<256xbf16>, i32, i32, i32, i32, i32) -> !rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>
  return %normed : !rows
}
