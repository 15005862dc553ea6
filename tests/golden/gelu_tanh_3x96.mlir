!x = tensor<3x96xf32>
func.func private @gelu_tanh_3x96(%x: !x) -> !x {
  %square = stablehlo.multiply %x, %x : !x
  %cube_raw = stablehlo.multiply %square, %x : !x
  %cube = stablehlo.reduce_precision %cube_raw, format = e8m7 : !x
  %k_cubic_s = stablehlo.constant dense<0x3D370000> : tensor<f32>
  %k_cubic = stablehlo.broadcast_in_dim %k_cubic_s, dims = [] : (tensor<f32>) -> tensor<3x96xf32>
  %term_raw = stablehlo.multiply %k_cubic, %cube : !x
  %term_r = stablehlo.reduce_precision %term_raw, format = e8m7 : !x
  %term = stablehlo.reshape %term_r : (!x) -> !x
  %inner_raw = stablehlo.add %x, %term : !x
  %inner = stablehlo.reduce_precision %inner_raw, format = e8m7 : !x
  %k_sqrt_s = stablehlo.constant dense<0x3F4C0000> : tensor<f32>
  %k_sqrt = stablehlo.broadcast_in_dim %k_sqrt_s, dims = [] : (tensor<f32>) -> tensor<3x96xf32>
  %scaled_raw = stablehlo.multiply %k_sqrt, %inner : !x
  %scaled = stablehlo.reduce_precision %scaled_raw, format = e8m7 : !x
  %tanh_raw = stablehlo.tanh %scaled : !x
  %tanh = stablehlo.reduce_precision %tanh_raw, format = e8m7 : !x
  %one_s = stablehlo.constant dense<0x3F800000> : tensor<f32>
  %one = stablehlo.broadcast_in_dim %one_s, dims = [] : (tensor<f32>) -> tensor<3x96xf32>
  %one_plus_raw = stablehlo.add %one, %tanh : !x
  %one_plus = stablehlo.reduce_precision %one_plus_raw, format = e8m7 : !x
  %half_s = stablehlo.constant dense<0x3F000000> : tensor<f32>
  %half = stablehlo.broadcast_in_dim %half_s, dims = [] : (tensor<f32>) -> tensor<3x96xf32>
  %half_x_raw = stablehlo.multiply %half, %x : !x
  %half_x = stablehlo.reduce_precision %half_x_raw, format = e8m7 : !x
  %out_raw = stablehlo.multiply %half_x, %one_plus : !x
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !x
  return %out : !x
}
