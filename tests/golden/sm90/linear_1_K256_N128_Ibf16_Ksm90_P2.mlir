!x = tensor<1x256xf32>
!rows = tensor<1x256xf32>
!rows_op = tensor<1x256xbf16>
!w = tensor<128x256xbf16>
!w_op = tensor<128x256xbf16>
!partials = tensor<2x1x128xf32>
!acc = tensor<1x128xf32>
!y = tensor<1x128xf32>
func.func private @linear_1_K256_N128_Ibf16_Ksm90_P2(%x: !x, %w: !w) -> !y {
  %rows = stablehlo.reshape %x : (!x) -> !rows
  %lhs = stablehlo.convert %rows : (!rows) -> !rows_op
  %rhs = stablehlo.convert %w : (!w) -> !w_op
  %partials_c0 = arith.constant 1 : i32
%partials_c1 = arith.constant 128 : i32
%partials_c2 = arith.constant 256 : i32
%partials_c3 = arith.constant 2 : i32
%partials = hal.dispatch.extern "gemv_bf16_nt_splitk"(%lhs, %rhs, %partials_c0, %partials_c1, %partials_c2, %partials_c3) : (!rows_op, !w_op, i32, i32, i32, i32) -> !partials
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 4 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %acc = stablehlo.reduce(%partials init: %zero) applies stablehlo.add across dimensions = [0] : (!partials, tensor<f32>) -> !acc
  %rounded = stablehlo.reduce_precision %acc, format = e8m7 : !acc
  %y = stablehlo.reshape %rounded : (!acc) -> !y
  return %y : !y
}
