!x = tensor<2x2048xf32>
!xn = tensor<2x2048xbf16>
!w_left = tensor<64x2048xbf16>
!w_right = tensor<2048x64xbf16>
!partials = tensor<16x2x64xf32>
func.func private @laurel_T2_D2048_R64_Xbf16_Ksm90(%xn: !xn, %w_left: !w_left, %w_right: !w_right, %w_norm: tensor<2048xbf16>) -> !x {
  %partials_c0 = arith.constant 2 : i32
%partials_c1 = arith.constant 64 : i32
%partials_c2 = arith.constant 2048 : i32
%partials_c3 = arith.constant 16 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_splitk"(%xn, %w_left, %partials_c0, %partials_c1, %partials_c2, %partials_c3) : (!xn, !w_left, i32, i32, i32, i32) -> !partials
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 16 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %out_c0 = arith.constant 2 : i32
%out_c1 = arith.constant 2048 : i32
%out_c2 = arith.constant 16 : i32
%out_c3 = arith.constant 897988541 : i32
%out_c4 = arith.constant 1 : i32
%out_c5 = arith.constant 1 : i32
%out = hal.dispatch.extern "laurel_tail"(%partials, %w_right, %w_norm, %xn, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4, %out_c5) : (!partials, !w_right, tensor<2048xbf16>, !xn, i32, i32, i32, i32, i32, i32) -> !x
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 6, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/laurel_tail_t256_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
  return %out : !x
}
