!kv = tensor<3x2x16xf32>
!rows = tensor<6x16xf32>
!w = tensor<32x48xbf16>
!t = tensor<3x16xf32>
func.func private @key_value_projection_T3_D48_K2_hd16(%xn: tensor<3x48xf32>, %w_k: !w, %w_v: !w, %w_norm: tensor<16xbf16>, %cos: !t, %sin: !t) -> (!kv, !kv) {
  %k_normed = func.call @projected_norm_T3_K48_N32_G2(%xn, %w_k, %w_norm) : (tensor<3x48xf32>, tensor<32x48xbf16>, tensor<16xbf16>) -> (tensor<6x16xf32>)
  %k_heads = stablehlo.reshape %k_normed : (!rows) -> !kv
  %k = func.call @rope_T3_H2_hd16(%k_heads, %cos, %sin) : (tensor<3x2x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) -> (tensor<3x2x16xf32>)
  %ones = stablehlo.constant dense<1.000000e+00> : tensor<16xbf16>
  %v_normed = func.call @projected_norm_T3_K48_N32_G2(%xn, %w_v, %ones) : (tensor<3x48xf32>, tensor<32x48xbf16>, tensor<16xbf16>) -> (tensor<6x16xf32>)
  %v = stablehlo.reshape %v_normed : (!rows) -> !kv
  return %k, %v : !kv, !kv
}
