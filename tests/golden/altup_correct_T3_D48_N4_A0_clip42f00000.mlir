!s = tensor<4x3x48xf32>
!one = tensor<1x3x48xf32>
!x = tensor<3x48xf32>
!c = tensor<3x4xf32>
func.func private @altup_correct_T3_D48_N4_A0_clip42f00000(%predictions: !s, %activated: !x, %w_norm: tensor<48xbf16>, %w_router: tensor<4x48xbf16>, %w_coefs: tensor<4x4xbf16>) -> !s {
  %modalities = func.call @altup_router_T3_D48_N4(%activated, %w_norm, %w_router) : (tensor<3x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>) -> (tensor<3x4xf32>)
  %w_f32 = stablehlo.convert %w_coefs : (tensor<4x4xbf16>) -> tensor<4x4xf32>
  %w_lo = stablehlo.constant dense<0xC2F00000> : tensor<f32>
  %w_hi = stablehlo.constant dense<0x42F00000> : tensor<f32>
  %w = stablehlo.clamp %w_lo, %w_f32, %w_hi : (tensor<f32>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %products_ab = stablehlo.broadcast_in_dim %modalities, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3x4xf32>
  %products_wb = stablehlo.broadcast_in_dim %w, dims = [2, 0] : (tensor<4x4xf32>) -> tensor<4x3x4xf32>
  %products_p_raw = stablehlo.multiply %products_ab, %products_wb : tensor<4x3x4xf32>
  %products_p = stablehlo.optimization_barrier %products_p_raw : tensor<4x3x4xf32>
  %products_p0_3d = "stablehlo.slice"(%products_p) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 4>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x4xf32>) -> tensor<1x3x4xf32>
  %products_p0 = stablehlo.reshape %products_p0_3d : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %products_s0 = stablehlo.reshape %products_p0 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %products_p1_3d = "stablehlo.slice"(%products_p) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x4xf32>) -> tensor<1x3x4xf32>
  %products_p1 = stablehlo.reshape %products_p1_3d : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %products_s1 = stablehlo.add %products_s0, %products_p1 : tensor<3x4xf32>
  %products_p2_3d = "stablehlo.slice"(%products_p) {start_indices = array<i64: 2, 0, 0>, limit_indices = array<i64: 3, 3, 4>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x4xf32>) -> tensor<1x3x4xf32>
  %products_p2 = stablehlo.reshape %products_p2_3d : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %products_s2 = stablehlo.add %products_s1, %products_p2 : tensor<3x4xf32>
  %products_p3_3d = "stablehlo.slice"(%products_p) {start_indices = array<i64: 3, 0, 0>, limit_indices = array<i64: 4, 3, 4>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x4xf32>) -> tensor<1x3x4xf32>
  %products_p3 = stablehlo.reshape %products_p3_3d : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %products_s3 = stablehlo.add %products_s2, %products_p3 : tensor<3x4xf32>
%products = stablehlo.reshape %products_s3 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %one_s = stablehlo.constant dense<0x3F800000> : tensor<f32>
  %one = stablehlo.broadcast_in_dim %one_s, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
  %coefs = stablehlo.add %products, %one : !c
  %predicted_3d = "stablehlo.slice"(%predictions) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %predicted = stablehlo.reshape %predicted_3d : (!one) -> !x
  %innovation_raw = stablehlo.subtract %activated, %predicted : !x
  %innovation = stablehlo.reduce_precision %innovation_raw, format = e8m7 : !x
  %innovation_b = stablehlo.broadcast_in_dim %innovation, dims = [1, 2] : (!x) -> !s
  %coefs_b = stablehlo.broadcast_in_dim %coefs, dims = [1, 0] : (!c) -> !s
  %product_raw = stablehlo.multiply %innovation_b, %coefs_b : !s
  %product = stablehlo.optimization_barrier %product_raw : !s
  %out_raw = stablehlo.add %product, %predictions : !s
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !s
  return %out : !s
}
