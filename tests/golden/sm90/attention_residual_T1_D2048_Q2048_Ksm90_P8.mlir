!x = tensor<1x2048xf32>
!values = tensor<8x1x2048xf32>
!w = tensor<2048x2048xbf16>
!partials = tensor<16x1x2048xf32>
func.func private @attention_residual_T1_D2048_Q2048_Ksm90_P8(%active: !x, %value_partials: !values, %w_o: !w, %w_norm: tensor<2048xbf16>, %laurel: !x) -> !x {
  %partials_c0 = arith.constant 1 : i32
%partials_c1 = arith.constant 2048 : i32
%partials_c2 = arith.constant 2048 : i32
%partials_c3 = arith.constant 16 : i32
%partials_c4 = arith.constant 8 : i32
%partials_c5 = arith.constant 1 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_summed_splitk"(%value_partials, %w_o, %partials_c0, %partials_c1, %partials_c2, %partials_c3, %partials_c4, %partials_c5) : (!values, !w, i32, i32, i32, i32, i32, i32) -> !partials
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 512 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 6, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_summed_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %h_c0 = arith.constant 1 : i32
%h_c1 = arith.constant 2048 : i32
%h_c2 = arith.constant 16 : i32
%h_c3 = arith.constant 897988541 : i32
%h_c4 = arith.constant 1060438016 : i32
%h_c5 = arith.constant 1 : i32
%h_c6 = arith.constant 1 : i32
%h_c7 = arith.constant 1 : i32
%h_c8 = arith.constant 1 : i32
%h = hal.dispatch.extern "rms_norm_partials_residual"(%partials, %w_norm, %active, %laurel, %h_c0, %h_c1, %h_c2, %h_c3, %h_c4, %h_c5, %h_c6, %h_c7, %h_c8) : (!partials, tensor<2048xbf16>, !x, !x, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !x
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_attention_t256_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
  return %h : !x
}
