!x = tensor<2x2048xf32>
func.func private @laurel_T2_D2048_R64_Xbf16_P16_Ksm90(%xn: tensor<2x2048xbf16>, %left_partials: tensor<16x2x64xf32>, %w_right: tensor<2048x64xbf16>, %w_norm: tensor<2048xbf16>) -> !x {
  %right_partials_c0 = arith.constant 2 : i32
%right_partials_c1 = arith.constant 2048 : i32
%right_partials_c2 = arith.constant 64 : i32
%right_partials_c3 = arith.constant 1 : i32
%right_partials_c4 = arith.constant 16 : i32
%right_partials_c5 = arith.constant 1 : i32
%right_partials = hal.dispatch.extern "gemv_bf16_nt_summed_splitk"(%left_partials, %w_right, %right_partials_c0, %right_partials_c1, %right_partials_c2, %right_partials_c3, %right_partials_c4, %right_partials_c5) : (tensor<16x2x64xf32>, tensor<2048x64xbf16>, i32, i32, i32, i32, i32, i32) -> tensor<1x2x2048xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 32 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 6, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_summed_k64_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 10240>
  %out_c0 = arith.constant 2 : i32
%out_c1 = arith.constant 2048 : i32
%out_c2 = arith.constant 1 : i32
%out_c3 = arith.constant 897988541 : i32
%out_c4 = arith.constant 1065353216 : i32
%out_c5 = arith.constant 1 : i32
%out_c6 = arith.constant 1 : i32
%out_c7 = arith.constant 0 : i32
%out_c8 = arith.constant 0 : i32
%out = hal.dispatch.extern "rms_norm_partials_residual"(%right_partials, %w_norm, %xn, %right_partials, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4, %out_c5, %out_c6, %out_c7, %out_c8) : (tensor<1x2x2048xf32>, tensor<2048xbf16>, tensor<2x2048xbf16>, tensor<1x2x2048xf32>, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !x
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_laurel_t256_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 8192>
  return %out : !x
}
