!x = tensor<3x48xf32>
!f = tensor<3x96xf32>
func.func private @decoder_mlp_T3_D48_F96_s0.95(%h: !x, %w_pre: tensor<48xbf16>, %w_gate: tensor<96x48xbf16>, %w_up: tensor<96x48xbf16>, %w_down: tensor<48x96xbf16>, %w_post: tensor<48xbf16>) -> !x {
  %f = func.call @mlx_rms_norm_R3_D48(%h, %w_pre) : (tensor<3x48xf32>, tensor<48xbf16>) -> (tensor<3x48xf32>)
  %gate = func.call @linear_3_K48_N96_Ibf16(%f, %w_gate) : (tensor<3x48xf32>, tensor<96x48xbf16>) -> (tensor<3x96xf32>)
  %kept = func.call @gaussian_topk_T3_F96_s0.95(%gate) : (tensor<3x96xf32>) -> (tensor<3x96xf32>)
  %act = func.call @gelu_tanh_3x96(%kept) : (tensor<3x96xf32>) -> (tensor<3x96xf32>)
  %up_out = func.call @linear_3_K48_N96_Ibf16(%f, %w_up) : (tensor<3x48xf32>, tensor<96x48xbf16>) -> (tensor<3x96xf32>)
  %product_raw = stablehlo.multiply %act, %up_out : !f
  %product = stablehlo.reduce_precision %product_raw, format = e8m7 : !f
  %normed_r = func.call @projected_norm_T3_K96_N48_G1(%product, %w_down, %w_post) : (tensor<3x96xf32>, tensor<48x96xbf16>, tensor<48xbf16>) -> (tensor<3x48xf32>)
  %normed = stablehlo.reshape %normed_r : (!x) -> !x
  %out_raw = stablehlo.add %h, %normed : !x
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !x
  return %out : !x
}
