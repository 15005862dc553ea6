!x = tensor<3x48xf32>
func.func private @laurel_T3_D48_R4(%xn: tensor<3x48xf32>, %w_left: tensor<4x48xbf16>, %w_right: tensor<48x4xbf16>, %w_norm: tensor<48xbf16>) -> !x {
  %left = func.call @linear_3_K48_N4_Ibf16(%xn, %w_left) : (tensor<3x48xf32>, tensor<4x48xbf16>) -> (tensor<3x4xf32>)
  %normed_r = func.call @projected_norm_T3_K4_N48_G1(%left, %w_right, %w_norm) : (tensor<3x4xf32>, tensor<48x4xbf16>, tensor<48xbf16>) -> (tensor<3x48xf32>)
  %normed = stablehlo.reshape %normed_r : (!x) -> !x
  %out_raw = stablehlo.add %xn, %normed : !x
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !x
  return %out : !x
}
