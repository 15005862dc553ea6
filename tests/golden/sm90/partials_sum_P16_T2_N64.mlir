!partials = tensor<16x2x64xf32>
!acc = tensor<2x64xf32>
func.func private @partials_sum_P16_T2_N64(%partials: !partials) -> !acc {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %acc = stablehlo.reduce(%partials init: %zero) applies stablehlo.add across dimensions = [0] : (!partials, tensor<f32>) -> !acc
  %rounded = stablehlo.reduce_precision %acc, format = e8m7 : !acc
  return %rounded : !acc
}
