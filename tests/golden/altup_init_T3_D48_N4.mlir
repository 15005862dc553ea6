!x = tensor<3x48xf32>
!one = tensor<1x3x48xf32>
!w = tensor<48x48xbf16>
func.func private @altup_init_T3_D48_N4(%embeds: !x, %w0: !w, %w1: !w, %w2: !w) -> tensor<4x3x48xf32> {
  %target = func.call @rms_magnitude_R3_D48(%embeds) : (tensor<3x48xf32>) -> (tensor<3xf32>)
  %s0 = stablehlo.reshape %embeds : (!x) -> !one
  %projected0 = func.call @linear_3_K48_N48_Ibf16(%embeds, %w0) : (tensor<3x48xf32>, tensor<48x48xbf16>) -> (tensor<3x48xf32>)
  %scaled0 = func.call @altup_rescale_T3_D48(%projected0, %target) : (tensor<3x48xf32>, tensor<3xf32>) -> (tensor<3x48xf32>)
  %s1 = stablehlo.reshape %scaled0 : (!x) -> !one
  %projected1 = func.call @linear_3_K48_N48_Ibf16(%embeds, %w1) : (tensor<3x48xf32>, tensor<48x48xbf16>) -> (tensor<3x48xf32>)
  %scaled1 = func.call @altup_rescale_T3_D48(%projected1, %target) : (tensor<3x48xf32>, tensor<3xf32>) -> (tensor<3x48xf32>)
  %s2 = stablehlo.reshape %scaled1 : (!x) -> !one
  %projected2 = func.call @linear_3_K48_N48_Ibf16(%embeds, %w2) : (tensor<3x48xf32>, tensor<48x48xbf16>) -> (tensor<3x48xf32>)
  %scaled2 = func.call @altup_rescale_T3_D48(%projected2, %target) : (tensor<3x48xf32>, tensor<3xf32>) -> (tensor<3x48xf32>)
  %s3 = stablehlo.reshape %scaled2 : (!x) -> !one
  %out = stablehlo.concatenate %s0, %s1, %s2, %s3, dim = 0 : (!one, !one, !one, !one) -> tensor<4x3x48xf32>
  return %out : tensor<4x3x48xf32>
}
