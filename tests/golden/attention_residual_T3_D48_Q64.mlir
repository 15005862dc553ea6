!x = tensor<3x48xf32>
func.func private @attention_residual_T3_D48_Q64(%active: !x, %attended: tensor<3x4x16xf32>, %w_o: tensor<48x64xbf16>, %w_norm: tensor<48xbf16>, %laurel: !x) -> !x {
  %flat = stablehlo.reshape %attended : (tensor<3x4x16xf32>) -> tensor<3x64xf32>
  %normed_r = func.call @projected_norm_T3_K64_N48_G1(%flat, %w_o, %w_norm) : (tensor<3x64xf32>, tensor<48x64xbf16>, tensor<48xbf16>) -> (tensor<3x48xf32>)
  %normed = stablehlo.reshape %normed_r : (!x) -> !x
  %h1_raw = stablehlo.add %active, %normed : !x
  %h1 = stablehlo.reduce_precision %h1_raw, format = e8m7 : !x
  %h2_raw = stablehlo.add %h1, %laurel : !x
  %h2 = stablehlo.reduce_precision %h2_raw, format = e8m7 : !x
  %scale_s = stablehlo.constant dense<0x3F350000> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %scale_s, dims = [] : (tensor<f32>) -> tensor<3x48xf32>
  %h3_raw = stablehlo.multiply %h2, %scale : !x
  %h = stablehlo.reduce_precision %h3_raw, format = e8m7 : !x
  return %h : !x
}
