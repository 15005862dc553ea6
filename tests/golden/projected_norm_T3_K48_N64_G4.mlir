!y = tensor<3x64xf32>
!rows = tensor<12x16xf32>
func.func private @projected_norm_T3_K48_N64_G4(%x: tensor<3x48xf32>, %w: tensor<64x48xbf16>, %w_norm: tensor<16xbf16>) -> !rows {
  %projected = func.call @linear_3_K48_N64_Ibf16(%x, %w) : (tensor<3x48xf32>, tensor<64x48xbf16>) -> (tensor<3x64xf32>)
  %rows = stablehlo.reshape %projected : (!y) -> !rows
  %normed = func.call @mlx_rms_norm_R12_D16(%rows, %w_norm) : (tensor<12x16xf32>, tensor<16xbf16>) -> (tensor<12x16xf32>)
  return %normed : !rows
}
