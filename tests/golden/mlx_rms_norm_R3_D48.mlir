!rows = tensor<3x48xf32>
!stat = tensor<3xf32>
!stat64 = tensor<3xf64>
func.func private @mlx_rms_norm_R3_D48(%x: !rows, %w: tensor<48xbf16>) -> !rows {
  %sumsq = func.call @lane_xor_sum_R3_W48_X8_sq(%x) : (tensor<3x48xf32>) -> (tensor<3xf32>)
  %width_s = stablehlo.constant dense<0x42400000> : tensor<f32>
  %width = stablehlo.broadcast_in_dim %width_s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %eps_s = stablehlo.constant dense<0x358637BD> : tensor<f32>
  %eps = stablehlo.broadcast_in_dim %eps_s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %mean = stablehlo.divide %sumsq, %width : !stat
  %stab = stablehlo.add %mean, %eps : !stat
  %stab64 = stablehlo.convert %stab : (!stat) -> !stat64
  %root64 = stablehlo.sqrt %stab64 : !stat64
  %root = stablehlo.convert %root64 : (!stat64) -> !stat
  %root_back = stablehlo.convert %root : (!stat) -> !stat64
  %one = stablehlo.constant dense<1.000000e+00> : !stat64
  %inv64 = stablehlo.divide %one, %root_back : !stat64
  %inv = stablehlo.convert %inv64 : (!stat64) -> !stat
  %inv_b = stablehlo.broadcast_in_dim %inv, dims = [0] : (!stat) -> !rows
  %normed_raw = stablehlo.multiply %x, %inv_b : !rows
  %normed = stablehlo.reduce_precision %normed_raw, format = e8m7 : !rows
  %w32 = stablehlo.convert %w : (tensor<48xbf16>) -> tensor<48xf32>
  %w_b = stablehlo.broadcast_in_dim %w32, dims = [1] : (tensor<48xf32>) -> !rows
  %scaled = stablehlo.multiply %normed, %w_b : !rows
  %y = stablehlo.reduce_precision %scaled, format = e8m7 : !rows
  return %y : !rows
}
