!s = tensor<4x2x2048xf32>
!one = tensor<1x2x2048xf32>
!rest = tensor<3x2x2048xf32>
!x = tensor<2x2048xf32>
!p = tensor<2x256xf32>
func.func private @ple_gate_T2_D2048_N4_P256_A0_scaled_Ksm90_sg(%corrected: !s, %ple: !p, %w_scale: tensor<2048xbf16>, %w_gate: tensor<256x2048xbf16>, %w_proj: tensor<2048x256xbf16>, %w_norm: tensor<2048xbf16>) -> !s {
  %first_3d = "stablehlo.slice"(%corrected) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 2, 2048>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %first = stablehlo.reshape %first_3d : (!one) -> !x
  %gate_linear = func.call @scaled_linear_T2_K2048_N256_P16(%first, %w_scale, %w_gate) : (tensor<2x2048xf32>, tensor<2048xbf16>, tensor<256x2048xbf16>) -> (tensor<2x256xf32>)
  %gate_act = func.call @gelu_tanh_2x256(%gate_linear) : (tensor<2x256xf32>) -> (tensor<2x256xf32>)
  %product_raw = stablehlo.multiply %gate_act, %ple : !p
  %product = stablehlo.reduce_precision %product_raw, format = e8m7 : !p
  %product_op = stablehlo.convert %product : (!p) -> tensor<2x256xbf16>
  %partials_c0 = arith.constant 2 : i32
%partials_c1 = arith.constant 2048 : i32
%partials_c2 = arith.constant 256 : i32
%partials_c3 = arith.constant 2 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_splitk"(%product_op, %w_proj, %partials_c0, %partials_c1, %partials_c2, %partials_c3) : (tensor<2x256xbf16>, tensor<2048x256xbf16>, i32, i32, i32, i32) -> tensor<2x2x2048xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 64 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %out_c0 = arith.constant 2 : i32
%out_c1 = arith.constant 2048 : i32
%out_c2 = arith.constant 2 : i32
%out_c3 = arith.constant 897988541 : i32
%out_c4 = arith.constant 1 : i32
%out_c5 = arith.constant 1 : i32
%out = hal.dispatch.extern "rms_norm_partials_streams"(%partials, %w_norm, %corrected, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4, %out_c5) : (tensor<2x2x2048xf32>, tensor<2048xbf16>, !s, i32, i32, i32, i32, i32, i32) -> !s
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 6, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_streams_t256_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
  return %out : !s
}
