!e = tensor<8x48xf32>
!flat = tensor<8x512xf32>
!rows = tensor<16x256xf32>
!ple = tensor<8x2x256xf32>
func.func private @dense_ple_C8_H48_L2_P256(%embeds: !e, %token_rows: tensor<8x512xbf16>, %w_proj: tensor<512x48xbf16>, %w_norm: tensor<256xbf16>, %length: tensor<i32>) -> (!ple, !flat) {
  %token_f32 = stablehlo.convert %token_rows : (tensor<8x512xbf16>) -> !flat
  %tok_scale_s = stablehlo.constant dense<0x41800000> : tensor<f32>
  %tok_scale = stablehlo.broadcast_in_dim %tok_scale_s, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
  %token_scaled = stablehlo.multiply %token_f32, %tok_scale : !flat
  %token_flat = stablehlo.reduce_precision %token_scaled, format = e8m7 : !flat
  %token = stablehlo.reshape %token_flat : (!flat) -> !ple
  %linear = func.call @linear_8_K48_N512_Ibf16(%embeds, %w_proj) : (tensor<8x48xf32>, tensor<512x48xbf16>) -> (tensor<8x512xf32>)
  %proj_scale_s = stablehlo.constant dense<0x3E140000> : tensor<f32>
  %proj_scale = stablehlo.broadcast_in_dim %proj_scale_s, dims = [] : (tensor<f32>) -> tensor<8x512xf32>
  %projected_scaled = stablehlo.multiply %linear, %proj_scale : !flat
  %projected = stablehlo.reduce_precision %projected_scaled, format = e8m7 : !flat
  %projected_rows = stablehlo.reshape %projected : (!flat) -> !rows
  %normed_rows = func.call @mlx_rms_norm_R16_D256(%projected_rows, %w_norm) : (tensor<16x256xf32>, tensor<256xbf16>) -> (tensor<16x256xf32>)
  %normed = stablehlo.reshape %normed_rows : (!rows) -> !ple
  %summed_raw = stablehlo.add %normed, %token : !ple
  %summed = stablehlo.reduce_precision %summed_raw, format = e8m7 : !ple
  %in_scale_s = stablehlo.constant dense<0x3F350000> : tensor<f32>
  %in_scale = stablehlo.broadcast_in_dim %in_scale_s, dims = [] : (tensor<f32>) -> tensor<8x2x256xf32>
  %scaled_raw = stablehlo.multiply %summed, %in_scale : !ple
  %scaled = stablehlo.reduce_precision %scaled_raw, format = e8m7 : !ple
  %position = stablehlo.iota dim = 0 : tensor<8x2x256xi32>
  %length_b = stablehlo.broadcast_in_dim %length, dims = [] : (tensor<i32>) -> tensor<8x2x256xi32>
  %live = stablehlo.compare LT, %position, %length_b, SIGNED : (tensor<8x2x256xi32>, tensor<8x2x256xi32>) -> tensor<8x2x256xi1>
  %zeros = stablehlo.constant dense<0.000000e+00> : !ple
  %out = stablehlo.select %live, %scaled, %zeros : tensor<8x2x256xi1>, !ple
  return %out, %linear : !ple, !flat
}
