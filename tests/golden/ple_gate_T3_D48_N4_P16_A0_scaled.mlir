!s = tensor<4x3x48xf32>
!one = tensor<1x3x48xf32>
!rest = tensor<3x3x48xf32>
!x = tensor<3x48xf32>
!p = tensor<3x16xf32>
func.func private @ple_gate_T3_D48_N4_P16_A0_scaled(%corrected: !s, %ple: !p, %w_scale: tensor<48xbf16>, %w_gate: tensor<16x48xbf16>, %w_proj: tensor<48x16xbf16>, %w_norm: tensor<48xbf16>) -> !s {
  %first_3d = "stablehlo.slice"(%corrected) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %first = stablehlo.reshape %first_3d : (!one) -> !x
  %scale = stablehlo.convert %w_scale : (tensor<48xbf16>) -> tensor<48xf32>
  %scale_b = stablehlo.broadcast_in_dim %scale, dims = [1] : (tensor<48xf32>) -> !x
  %first_scaled_raw = stablehlo.multiply %first, %scale_b : !x
  %gate_in = stablehlo.reduce_precision %first_scaled_raw, format = e8m7 : !x
  %gate_linear = func.call @linear_3_K48_N16_Ibf16(%gate_in, %w_gate) : (tensor<3x48xf32>, tensor<16x48xbf16>) -> (tensor<3x16xf32>)
  %gate_act = func.call @gelu_tanh_3x16(%gate_linear) : (tensor<3x16xf32>) -> (tensor<3x16xf32>)
  %product_raw = stablehlo.multiply %gate_act, %ple : !p
  %product = stablehlo.reduce_precision %product_raw, format = e8m7 : !p
  %injected_r = func.call @projected_norm_T3_K16_N48_G1(%product, %w_proj, %w_norm) : (tensor<3x16xf32>, tensor<48x16xbf16>, tensor<48xbf16>) -> (tensor<3x48xf32>)
  %injected = stablehlo.reshape %injected_r : (!x) -> !x
  %stream0 = "stablehlo.slice"(%corrected) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %others = "stablehlo.slice"(%corrected) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 4, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !rest
  %injected_b = stablehlo.broadcast_in_dim %injected, dims = [1, 2] : (!x) -> !rest
  %others_raw = stablehlo.add %others, %injected_b : !rest
  %others_out = stablehlo.reduce_precision %others_raw, format = e8m7 : !rest
  %out = stablehlo.concatenate %stream0, %others_out, dim = 0 : (!one, !rest) -> !s
  return %out : !s
}
