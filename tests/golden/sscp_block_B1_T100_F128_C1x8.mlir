!x = tensor<1x100x128x1xf32>
!y = tensor<1x50x64x8xf32>
!stat = tensor<1x50xf32>
func.func private @sscp_block_B1_T100_F128_C1x8(%x: !x, %w_conv: tensor<8x1x3x3xbf16>, %w_norm: tensor<8xbf16>, %valid: tensor<1x50xi1>) -> (!y, !y, !y, !stat, !stat, !stat, !stat, !stat, !stat, !stat, !stat) {
  %conv = func.call @sscp_conv_B1_T100_F128_C1x8_S2x2_Ibf16_Rf32_oihw(%x, %w_conv) : (tensor<1x100x128x1xf32>, tensor<8x1x3x3xbf16>) -> (tensor<1x50x64x8xf32>)
  %n:9 = func.call @cumulative_group_norm_B1_T50_F64_C8(%conv, %w_norm) : (tensor<1x50x64x8xf32>, tensor<8xbf16>) -> (tensor<1x50x64x8xf32>, tensor<1x50xf32>, tensor<1x50xf32>, tensor<1x50xf32>, tensor<1x50xf32>, tensor<1x50xf32>, tensor<1x50xf32>, tensor<1x50xf32>, tensor<1x50xf32>)
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %zeros = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> !y
  %relu = stablehlo.maximum %n#0, %zeros : !y
  %act = func.call @mask_frames_1x50x64x8(%relu, %valid) : (tensor<1x50x64x8xf32>, tensor<1x50xi1>) -> (tensor<1x50x64x8xf32>)
  return %act, %conv, %n#0, %n#1, %n#2, %n#3, %n#4, %n#5, %n#6, %n#7, %n#8 : !y, !y, !y, !stat, !stat, !stat, !stat, !stat, !stat, !stat, !stat
}
