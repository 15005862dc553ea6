!g = tensor<3x96xf32>
!stat = tensor<3xf32>
func.func private @gaussian_topk_T3_F96_s0.95(%g: !g) -> !g {
  %mu = func.call @row_mean_R3_W96(%g) : (tensor<3x96xf32>) -> (tensor<3xf32>)
  %mu_b = stablehlo.broadcast_in_dim %mu, dims = [0] : (!stat) -> !g
  %centered_raw = stablehlo.subtract %g, %mu_b : !g
  %centered = stablehlo.reduce_precision %centered_raw, format = e8m7 : !g
  %square_raw = stablehlo.multiply %centered, %centered : !g
  %square_r = stablehlo.reduce_precision %square_raw, format = e8m7 : !g
  %square = stablehlo.reshape %square_r : (!g) -> !g
  %variance = func.call @row_mean_R3_W96(%square) : (tensor<3x96xf32>) -> (tensor<3xf32>)
  %std_raw_x64 = stablehlo.convert %variance : (tensor<3xf32>) -> tensor<3xf64>
  %std_raw_64 = stablehlo.sqrt %std_raw_x64 : tensor<3xf64>
  %std_raw = stablehlo.convert %std_raw_64 : (tensor<3xf64>) -> tensor<3xf32>
  %std = stablehlo.reduce_precision %std_raw, format = e8m7 : !stat
  %z_s = stablehlo.constant dense<0x3FD30000> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %z_s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %spread_raw = stablehlo.multiply %std, %z : !stat
  %spread_r = stablehlo.reduce_precision %spread_raw, format = e8m7 : !stat
  %spread = stablehlo.reshape %spread_r : (!stat) -> !stat
  %cutoff_raw = stablehlo.add %mu, %spread : !stat
  %cutoff = stablehlo.reduce_precision %cutoff_raw, format = e8m7 : !stat
  %cutoff_b = stablehlo.broadcast_in_dim %cutoff, dims = [0] : (!stat) -> !g
  %shifted_raw = stablehlo.subtract %g, %cutoff_b : !g
  %shifted = stablehlo.reduce_precision %shifted_raw, format = e8m7 : !g
  %zero = stablehlo.constant dense<0.000000e+00> : !g
  %out = stablehlo.maximum %shifted, %zero : !g
  return %out : !g
}
