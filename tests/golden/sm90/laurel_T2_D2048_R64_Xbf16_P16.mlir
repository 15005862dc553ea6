!x = tensor<2x2048xf32>
func.func private @laurel_T2_D2048_R64_Xbf16_P16(%xn: tensor<2x2048xbf16>, %left_partials: tensor<16x2x64xf32>, %w_right: tensor<2048x64xbf16>, %w_norm: tensor<2048xbf16>) -> !x {
  %left = func.call @partials_sum_P16_T2_N64(%left_partials) : (tensor<16x2x64xf32>) -> (tensor<2x64xf32>)
  %normed_r = func.call @projected_norm_T2_K64_N2048_G1_Ksm90(%left, %w_right, %w_norm) : (tensor<2x64xf32>, tensor<2048x64xbf16>, tensor<2048xbf16>) -> (tensor<2x2048xf32>)
  %normed = stablehlo.reshape %normed_r : (!x) -> !x
  %xn32 = stablehlo.convert %xn : (tensor<2x2048xbf16>) -> !x
  %out_raw = stablehlo.add %xn32, %normed : !x
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !x
  return %out : !x
}
