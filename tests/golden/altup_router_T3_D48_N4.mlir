!x = tensor<3x48xf32>
!mod = tensor<3x4xf32>
func.func private @altup_router_T3_D48_N4(%x: !x, %w_norm: tensor<48xbf16>, %w_router: tensor<4x48xbf16>) -> !mod {
  %normed = func.call @mlx_rms_norm_R3_D48(%x, %w_norm) : (tensor<3x48xf32>, tensor<48xbf16>) -> (tensor<3x48xf32>)
  %scale_s = stablehlo.constant dense<0x3CAB0000> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %scale_s, dims = [] : (tensor<f32>) -> tensor<3x48xf32>
  %scaled_raw = stablehlo.multiply %normed, %scale : !x
  %scaled = stablehlo.reduce_precision %scaled_raw, format = e8m7 : !x
  %routed = func.call @linear_3_K48_N4_Ibf16(%scaled, %w_router) : (tensor<3x48xf32>, tensor<4x48xbf16>) -> (tensor<3x4xf32>)
  %modalities = stablehlo.tanh %routed : !mod
  return %modalities : !mod
}
