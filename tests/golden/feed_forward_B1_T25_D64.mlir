!x = tensor<1x25x64xf32>
!h = tensor<1x25x256xf32>
!wn = tensor<64xbf16>
func.func private @feed_forward_B1_T25_D64(%x: !x, %pre_norm: !wn, %w1: tensor<256x64xbf16>, %w2: tensor<64x256xbf16>, %post_norm: !wn) -> !x {
  %clipped_lo = stablehlo.constant dense<0xD01502F9> : tensor<f32>
  %clipped_hi = stablehlo.constant dense<0x501502F9> : tensor<f32>
  %clipped = stablehlo.clamp %clipped_lo, %x, %clipped_hi : (tensor<f32>, !x, tensor<f32>) -> !x
  %normed = func.call @rms_norm_1x25_D64_scaled(%clipped, %pre_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %up = func.call @linear_1x25_K64_N256_Ibf16(%normed, %w1) : (tensor<1x25x64xf32>, tensor<256x64xbf16>) -> (tensor<1x25x256xf32>)
  %act_gate = stablehlo.logistic %up : !h
  %act_raw = stablehlo.multiply %up, %act_gate : !h
  %act = stablehlo.reduce_precision %act_raw, format = e8m7 : !h
  %down = func.call @linear_1x25_K256_N64_Ibf16(%act, %w2) : (tensor<1x25x256xf32>, tensor<64x256xbf16>) -> (tensor<1x25x64xf32>)
  %down_clipped_lo = stablehlo.constant dense<0xD01502F9> : tensor<f32>
  %down_clipped_hi = stablehlo.constant dense<0x501502F9> : tensor<f32>
  %down_clipped = stablehlo.clamp %down_clipped_lo, %down, %down_clipped_hi : (tensor<f32>, !x, tensor<f32>) -> !x
  %post = func.call @rms_norm_1x25_D64_scaled(%down_clipped, %post_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %residual_weight_s = stablehlo.constant dense<0x3F000000> : tensor<f32>
  %residual_weight = stablehlo.broadcast_in_dim %residual_weight_s, dims = [] : (tensor<f32>) -> tensor<1x25x64xf32>
  %scaled = stablehlo.multiply %post, %residual_weight : !x
  %sum = stablehlo.add %x, %scaled : !x
  %y = stablehlo.reduce_precision %sum, format = e8m7 : !x
  return %y : !x
}
