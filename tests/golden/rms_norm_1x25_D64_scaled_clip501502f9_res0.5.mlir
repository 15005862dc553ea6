!x = tensor<1x25x64xf32>
!x_in = tensor<1x25x64xf32>
!y = tensor<1x25x64xf32>
!rows = tensor<25x64xf32>
!stat = tensor<25xf32>
func.func private @rms_norm_1x25_D64_scaled_clip501502f9_res0.5(%x: !x_in, %w: tensor<64xbf16>, %res: !x) -> !y {
  %clipped_lo = stablehlo.constant dense<0xD01502F9> : tensor<f32>
  %clipped_hi = stablehlo.constant dense<0x501502F9> : tensor<f32>
  %clipped = stablehlo.clamp %clipped_lo, %x, %clipped_hi : (tensor<f32>, !x, tensor<f32>) -> !x
  %rows = stablehlo.reshape %clipped : (!x) -> !rows
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
  %norm = stablehlo.reshape %rounded : (!rows) -> !x
  %residual_weight_s = stablehlo.constant dense<0x3F000000> : tensor<f32>
  %residual_weight = stablehlo.broadcast_in_dim %residual_weight_s, dims = [] : (tensor<f32>) -> tensor<1x25x64xf32>
  %weighted = stablehlo.multiply %norm, %residual_weight : !x
  %sum = stablehlo.add %res, %weighted : !x
  %y = stablehlo.reduce_precision %sum, format = e8m7 : !x
  return %y : !y
}
