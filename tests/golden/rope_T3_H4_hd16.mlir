!x = tensor<3x4x16xf32>
!h = tensor<3x4x8xf32>
!t = tensor<3x16xf32>
func.func private @rope_T3_H4_hd16(%x: !x, %cos: !t, %sin: !t) -> !x {
  %x1 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 3, 4, 8>, strides = array<i64: 1, 1, 1>} : (!x) -> !h
  %x2 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0, 8>, limit_indices = array<i64: 3, 4, 16>, strides = array<i64: 1, 1, 1>} : (!x) -> !h
  %minus_x2 = stablehlo.negate %x2 : !h
  %rotated = stablehlo.concatenate %minus_x2, %x1, dim = 2 : (!h, !h) -> !x
  %cos_b = stablehlo.broadcast_in_dim %cos, dims = [0, 2] : (!t) -> !x
  %sin_b = stablehlo.broadcast_in_dim %sin, dims = [0, 2] : (!t) -> !x
  %a_raw = stablehlo.multiply %x, %cos_b : !x
  %a_r = stablehlo.reduce_precision %a_raw, format = e8m7 : !x
  %a = stablehlo.reshape %a_r : (!x) -> !x
  %b_raw = stablehlo.multiply %rotated, %sin_b : !x
  %b_r = stablehlo.reduce_precision %b_raw, format = e8m7 : !x
  %b = stablehlo.reshape %b_r : (!x) -> !x
  %sum_raw = stablehlo.add %a, %b : !x
  %sum = stablehlo.reduce_precision %sum_raw, format = e8m7 : !x
  return %sum : !x
}
