!stat = tensor<3xf32>
func.func private @row_mean_R3_W48(%x: tensor<3x48xf32>) -> !stat {
  %sum = func.call @lane_xor_sum_R3_W48_X8(%x) : (tensor<3x48xf32>) -> (tensor<3xf32>)
  %sum_r = stablehlo.reduce_precision %sum, format = e8m7 : !stat
  %scale_s = stablehlo.constant dense<0x3CAB0000> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %scale_s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %mean_raw = stablehlo.multiply %sum_r, %scale : !stat
  %mean_r = stablehlo.reduce_precision %mean_raw, format = e8m7 : !stat
  %mean = stablehlo.reshape %mean_r : (!stat) -> !stat
  return %mean : !stat
}
