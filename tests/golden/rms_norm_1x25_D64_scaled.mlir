!x = tensor<1x25x64xf32>
!x_in = tensor<1x25x64xf32>
!y = tensor<1x25x64xf32>
!rows = tensor<25x64xf32>
!stat = tensor<25xf32>
func.func private @rms_norm_1x25_D64_scaled(%x: !x_in, %w: tensor<64xbf16>) -> !y {
  %rows = stablehlo.reshape %x : (!x) -> !rows
  %sumsq = func.call @lane_xor_sum_R25_W64_X8_sq(%rows) : (tensor<25x64xf32>) -> (tensor<25xf32>)
  %width_s = stablehlo.constant dense<0x42800000> : tensor<f32>
  %width = stablehlo.broadcast_in_dim %width_s, dims = [] : (tensor<f32>) -> tensor<25xf32>
  %eps_s = stablehlo.constant dense<0x358637BD> : tensor<f32>
  %eps = stablehlo.broadcast_in_dim %eps_s, dims = [] : (tensor<f32>) -> tensor<25xf32>
  %mean = stablehlo.divide %sumsq, %width : !stat
  %stab = stablehlo.add %mean, %eps : !stat
  %one_s = stablehlo.constant dense<0x3F800000> : tensor<f32>
  %one = stablehlo.broadcast_in_dim %one_s, dims = [] : (tensor<f32>) -> tensor<25xf32>
  %stab64 = stablehlo.convert %stab : (!stat) -> tensor<25xf64>
  %root64 = stablehlo.sqrt %stab64 : tensor<25xf64>
  %root = stablehlo.convert %root64 : (tensor<25xf64>) -> !stat
  %inv = stablehlo.divide %one, %root : !stat
  %inv_b = stablehlo.broadcast_in_dim %inv, dims = [0] : (!stat) -> !rows
  %normed = stablehlo.multiply %rows, %inv_b : !rows
  %w32 = stablehlo.convert %w : (tensor<64xbf16>) -> tensor<64xf32>
  %w_b = stablehlo.broadcast_in_dim %w32, dims = [1] : (tensor<64xf32>) -> !rows
  %scaled = stablehlo.multiply %normed, %w_b : !rows
  %rounded = stablehlo.reduce_precision %scaled, format = e8m7 : !rows
  %y = stablehlo.reshape %rounded : (!rows) -> !x
  return %y : !y
}
