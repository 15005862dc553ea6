!q = tensor<3x4x16xf32>
!rows = tensor<12x16xf32>
!t = tensor<3x16xf32>
func.func private @query_projection_T3_D48_H4_hd16(%xn: tensor<3x48xf32>, %w_q: tensor<64x48xbf16>, %w_norm: tensor<16xbf16>, %cos: !t, %sin: !t) -> !q {
  %normed = func.call @projected_norm_T3_K48_N64_G4(%xn, %w_q, %w_norm) : (tensor<3x48xf32>, tensor<64x48xbf16>, tensor<16xbf16>) -> (tensor<12x16xf32>)
  %heads = stablehlo.reshape %normed : (!rows) -> !q
  %q = func.call @rope_T3_H4_hd16(%heads, %cos, %sin) : (tensor<3x4x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) -> (tensor<3x4x16xf32>)
  return %q : !q
}
