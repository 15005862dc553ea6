!x = tensor<1x25x64xf32>
!rows = tensor<25x64xf32>
!rows_op = tensor<25x64xbf16>
!w = tensor<256x64xbf16>
!w_op = tensor<256x64xbf16>
!acc = tensor<25x256xf32>
!y = tensor<1x25x256xf32>
func.func private @linear_1x25_K64_N256_Ibf16_Ksm90(%x: !x, %w: !w) -> !y {
  %rows = stablehlo.reshape %x : (!x) -> !rows
  %lhs = stablehlo.convert %rows : (!rows) -> !rows_op
  %rhs = stablehlo.convert %w : (!w) -> !w_op
  %rounded_op_c0 = arith.constant 25 : i32
%rounded_op_c1 = arith.constant 256 : i32
%rounded_op_c2 = arith.constant 64 : i32
%rounded_op = hal.dispatch.extern "gemm_bf16_nt"(%lhs, %rhs, %rounded_op_c0, %rounded_op_c1, %rounded_op_c2) : (!rows_op, !w_op, i32, i32, i32) -> tensor<25x256xbf16>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemm_bf16_nt_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 147456>
  %rounded = stablehlo.convert %rounded_op : (tensor<25x256xbf16>) -> !acc
  %y = stablehlo.reshape %rounded : (!acc) -> !y
  return %y : !y
}
