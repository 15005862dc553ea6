!x = tensor<1x25x64xf32>
!h = tensor<1x25x256xf32>
!wn = tensor<64xbf16>
func.func private @feed_forward_B1_T25_D64(%x: !x, %pre_norm: !wn, %w1: tensor<256x64xbf16>, %w2: tensor<64x256xbf16>, %post_norm: !wn) -> !x {
  %normed = func.call @rms_norm_1x25_D64_scaled_clip501502f9(%x, %pre_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %up = func.call @linear_1x25_K64_N256_Ibf16(%normed, %w1) : (tensor<1x25x64xf32>, tensor<256x64xbf16>) -> (tensor<1x25x256xf32>)
  %act_gate = stablehlo.logistic %up : !h
  %act_raw = stablehlo.multiply %up, %act_gate : !h
  %act = stablehlo.reduce_precision %act_raw, format = e8m7 : !h
  %down = func.call @linear_1x25_K256_N64_Ibf16(%act, %w2) : (tensor<1x25x256xf32>, tensor<64x256xbf16>) -> (tensor<1x25x64xf32>)
  %y = func.call @rms_norm_1x25_D64_scaled_clip501502f9_res0.5(%down, %post_norm, %x) : (tensor<1x25x64xf32>, tensor<64xbf16>, tensor<1x25x64xf32>) -> (tensor<1x25x64xf32>)
  return %y : !x
}
