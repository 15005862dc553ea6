!x = tensor<1x7x64xf32>
!y = tensor<1x7x48xf32>
func.func private @embedder_1x7_D64_N48(%x: !x, %norm_w: tensor<64xbf16>, %proj_w: tensor<48x64xbf16>) -> (!x, !y, !y) {
  %normed = func.call @rms_norm_1x7_D64_scaled(%x, %norm_w) : (tensor<1x7x64xf32>, tensor<64xbf16>) -> (tensor<1x7x64xf32>)
  %projected = func.call @linear_1x7_K64_N48_Ibf16(%normed, %proj_w) : (tensor<1x7x64xf32>, tensor<48x64xbf16>) -> (tensor<1x7x48xf32>)
  %post = func.call @rms_norm_1x7_D48_noscale(%projected) : (tensor<1x7x48xf32>) -> (tensor<1x7x48xf32>)
  return %normed, %projected, %post : !x, !y, !y
}
