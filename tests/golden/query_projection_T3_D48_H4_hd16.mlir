!q = tensor<3x4x16xf32>
!rows = tensor<12x16xf32>
!t = tensor<3x16xf32>
func.func private @query_projection_T3_D48_H4_hd16(%xn: tensor<3x48xf32>, %w_q: tensor<64x48xbf16>, %w_norm: tensor<16xbf16>, %cos: !t, %sin: !t) -> !q {
  %projected = func.call @linear_3_K48_N64_Ibf16(%xn, %w_q) : (tensor<3x48xf32>, tensor<64x48xbf16>) -> (tensor<3x64xf32>)
  %rows = stablehlo.reshape %projected : (tensor<3x64xf32>) -> !rows
  %normed = func.call @mlx_rms_norm_R12_D16(%rows, %w_norm) : (tensor<12x16xf32>, tensor<16xbf16>) -> (tensor<12x16xf32>)
  %heads = stablehlo.reshape %normed : (!rows) -> !q
  %q = func.call @rope_T3_H4_hd16(%heads, %cos, %sin) : (tensor<3x4x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) -> (tensor<3x4x16xf32>)
  return %q : !q
}
