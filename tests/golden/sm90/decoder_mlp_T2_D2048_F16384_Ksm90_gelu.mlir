!x = tensor<2x2048xf32>
func.func private @decoder_mlp_T2_D2048_F16384_Ksm90_gelu(%h: !x, %w_pre: tensor<2048xbf16>, %w_gate: tensor<16384x2048xbf16>, %w_up: tensor<16384x2048xbf16>, %w_down: tensor<2048x16384xbf16>, %w_post: tensor<2048xbf16>) -> !x {
  %f = func.call @mlx_rms_norm_R2_D2048_Ksm90_Ybf16(%h, %w_pre) : (tensor<2x2048xf32>, tensor<2048xbf16>) -> (tensor<2x2048xbf16>)
  %product_op_c0 = arith.constant 2 : i32
%product_op_c1 = arith.constant 16384 : i32
%product_op_c2 = arith.constant 2048 : i32
%product_op_c3 = arith.constant 1027014656 : i32
%product_op_c4 = arith.constant 1061945344 : i32
%product_op_c5 = arith.constant 1 : i32
%product_op_c6 = arith.constant 1 : i32
%product_op_c7 = arith.constant 1 : i32
%product_op_c8 = arith.constant 1 : i32
%product_op_c9 = arith.constant 1 : i32
%product_op_c10 = arith.constant 1 : i32
%product_op_c11 = arith.constant 1 : i32
%product_op_c12 = arith.constant 1 : i32
%product_op_c13 = arith.constant 1 : i32
%product_op_c14 = arith.constant 1 : i32
%product_op = hal.dispatch.extern "gemv_bf16_nt_gelu_product"(%f, %w_gate, %w_up, %product_op_c0, %product_op_c1, %product_op_c2, %product_op_c3, %product_op_c4, %product_op_c5, %product_op_c6, %product_op_c7, %product_op_c8, %product_op_c9, %product_op_c10, %product_op_c11, %product_op_c12, %product_op_c13, %product_op_c14) : (tensor<2x2048xbf16>, tensor<16384x2048xbf16>, tensor<16384x2048xbf16>, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> tensor<2x16384xbf16>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 256 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 15, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_gelu_product_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 73728>
  %partials_c0 = arith.constant 2 : i32
%partials_c1 = arith.constant 2048 : i32
%partials_c2 = arith.constant 16384 : i32
%partials_c3 = arith.constant 16 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_splitk"(%product_op, %w_down, %partials_c0, %partials_c1, %partials_c2, %partials_c3) : (tensor<2x16384xbf16>, tensor<2048x16384xbf16>, i32, i32, i32, i32) -> tensor<16x2x2048xf32>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 512 : index
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
%out_c4 = arith.constant 1065353216 : i32
%out_c5 = arith.constant 1 : i32
%out_c6 = arith.constant 1 : i32
%out_c7 = arith.constant 0 : i32
%out_c8 = arith.constant 0 : i32
%out = hal.dispatch.extern "rms_norm_partials_residual"(%partials, %w_post, %h, %h, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4, %out_c5, %out_c6, %out_c7, %out_c8) : (tensor<16x2x2048xf32>, tensor<2048xbf16>, !x, !x, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !x
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_partials_mlp_t256_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
  return %out : !x
}
