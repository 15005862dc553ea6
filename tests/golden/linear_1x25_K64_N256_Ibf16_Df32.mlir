!x = tensor<1x25x64xf32>
!rows = tensor<25x64xf32>
!rows_op = tensor<25x64xf32>
!w = tensor<256x64xbf16>
!w_op = tensor<256x64xf32>
!acc = tensor<25x256xf32>
!y = tensor<1x25x256xf32>
func.func private @linear_1x25_K64_N256_Ibf16_Df32(%x: !x, %w: !w) -> !y {
  %rows = stablehlo.reshape %x : (!x) -> !rows
  %lhs = stablehlo.reduce_precision %rows, format = e8m7 : !rows_op
  %rhs = stablehlo.convert %w : (!w) -> !w_op
  %acc = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (!rows_op, !w_op) -> !acc
  %rounded = stablehlo.reduce_precision %acc, format = e8m7 : !acc
  %y = stablehlo.reshape %rounded : (!acc) -> !y
  return %y : !y
}
