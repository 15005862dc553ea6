!kv = tensor<3x2x16xf32>
!rows = tensor<6x16xf32>
!flat = tensor<3x32xf32>
!w = tensor<32x48xbf16>
!t = tensor<3x16xf32>
func.func private @key_value_projection_T3_D48_K2_hd16(%xn: tensor<3x48xf32>, %w_k: !w, %w_v: !w, %w_norm: tensor<16xbf16>, %cos: !t, %sin: !t) -> (!kv, !kv) {
  %k_projected = func.call @linear_3_K48_N32_Ibf16(%xn, %w_k) : (tensor<3x48xf32>, tensor<32x48xbf16>) -> (tensor<3x32xf32>)
  %k_rows = stablehlo.reshape %k_projected : (!flat) -> !rows
  %k_normed = func.call @mlx_rms_norm_R6_D16(%k_rows, %w_norm) : (tensor<6x16xf32>, tensor<16xbf16>) -> (tensor<6x16xf32>)
  %k_heads = stablehlo.reshape %k_normed : (!rows) -> !kv
  %k = func.call @rope_T3_H2_hd16(%k_heads, %cos, %sin) : (tensor<3x2x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) -> (tensor<3x2x16xf32>)
  %v_projected = func.call @linear_3_K48_N32_Ibf16(%xn, %w_v) : (tensor<3x48xf32>, tensor<32x48xbf16>) -> (tensor<3x32xf32>)
  %v_rows = stablehlo.reshape %v_projected : (!flat) -> !rows
  %ones = stablehlo.constant dense<1.000000e+00> : tensor<16xbf16>
  %v_normed = func.call @mlx_rms_norm_R6_D16(%v_rows, %ones) : (tensor<6x16xf32>, tensor<16xbf16>) -> (tensor<6x16xf32>)
  %v = stablehlo.reshape %v_normed : (!rows) -> !kv
  return %k, %v : !kv, !kv
}
