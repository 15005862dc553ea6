!s = tensor<4x3x48xf32>
!one = tensor<1x3x48xf32>
!x = tensor<3x48xf32>
func.func private @altup_predict_T3_D48_N4_A0_clip42f00000(%streams: !s, %w_norm: tensor<48xbf16>, %w_router: tensor<4x48xbf16>, %w_coefs: tensor<16x4xbf16>) -> !s {
  %active_3d = "stablehlo.slice"(%streams) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %active = stablehlo.reshape %active_3d : (!one) -> !x
  %modalities = func.call @altup_router_T3_D48_N4(%active, %w_norm, %w_router) : (tensor<3x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>) -> (tensor<3x4xf32>)
  %w_f32 = stablehlo.convert %w_coefs : (tensor<16x4xbf16>) -> tensor<16x4xf32>
  %w_lo = stablehlo.constant dense<0xC2F00000> : tensor<f32>
  %w_hi = stablehlo.constant dense<0x42F00000> : tensor<f32>
  %w = stablehlo.clamp %w_lo, %w_f32, %w_hi : (tensor<f32>, tensor<16x4xf32>, tensor<f32>) -> tensor<16x4xf32>
  %coefs_flat_a0_2d = "stablehlo.slice"(%modalities) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 3, 1>, strides = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %coefs_flat_a0 = stablehlo.reshape %coefs_flat_a0_2d : (tensor<3x1xf32>) -> tensor<3xf32>
  %coefs_flat_w0_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 16, 1>, strides = array<i64: 1, 1>} : (tensor<16x4xf32>) -> tensor<16x1xf32>
  %coefs_flat_w0 = stablehlo.reshape %coefs_flat_w0_2d : (tensor<16x1xf32>) -> tensor<16xf32>
  %coefs_flat_ab0 = stablehlo.broadcast_in_dim %coefs_flat_a0, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %coefs_flat_wb0 = stablehlo.broadcast_in_dim %coefs_flat_w0, dims = [1] : (tensor<16xf32>) -> tensor<3x16xf32>
  %coefs_flat_p0_raw = stablehlo.multiply %coefs_flat_ab0, %coefs_flat_wb0 : tensor<3x16xf32>
  %coefs_flat_p0 = stablehlo.optimization_barrier %coefs_flat_p0_raw : tensor<3x16xf32>
  %coefs_flat_s0 = stablehlo.reshape %coefs_flat_p0 : (tensor<3x16xf32>) -> tensor<3x16xf32>
%coefs_flat_a1_2d = "stablehlo.slice"(%modalities) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 3, 2>, strides = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %coefs_flat_a1 = stablehlo.reshape %coefs_flat_a1_2d : (tensor<3x1xf32>) -> tensor<3xf32>
  %coefs_flat_w1_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 16, 2>, strides = array<i64: 1, 1>} : (tensor<16x4xf32>) -> tensor<16x1xf32>
  %coefs_flat_w1 = stablehlo.reshape %coefs_flat_w1_2d : (tensor<16x1xf32>) -> tensor<16xf32>
  %coefs_flat_ab1 = stablehlo.broadcast_in_dim %coefs_flat_a1, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %coefs_flat_wb1 = stablehlo.broadcast_in_dim %coefs_flat_w1, dims = [1] : (tensor<16xf32>) -> tensor<3x16xf32>
  %coefs_flat_p1_raw = stablehlo.multiply %coefs_flat_ab1, %coefs_flat_wb1 : tensor<3x16xf32>
  %coefs_flat_p1 = stablehlo.optimization_barrier %coefs_flat_p1_raw : tensor<3x16xf32>
  %coefs_flat_s1 = stablehlo.add %coefs_flat_s0, %coefs_flat_p1 : tensor<3x16xf32>
%coefs_flat_a2_2d = "stablehlo.slice"(%modalities) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %coefs_flat_a2 = stablehlo.reshape %coefs_flat_a2_2d : (tensor<3x1xf32>) -> tensor<3xf32>
  %coefs_flat_w2_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 16, 3>, strides = array<i64: 1, 1>} : (tensor<16x4xf32>) -> tensor<16x1xf32>
  %coefs_flat_w2 = stablehlo.reshape %coefs_flat_w2_2d : (tensor<16x1xf32>) -> tensor<16xf32>
  %coefs_flat_ab2 = stablehlo.broadcast_in_dim %coefs_flat_a2, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %coefs_flat_wb2 = stablehlo.broadcast_in_dim %coefs_flat_w2, dims = [1] : (tensor<16xf32>) -> tensor<3x16xf32>
  %coefs_flat_p2_raw = stablehlo.multiply %coefs_flat_ab2, %coefs_flat_wb2 : tensor<3x16xf32>
  %coefs_flat_p2 = stablehlo.optimization_barrier %coefs_flat_p2_raw : tensor<3x16xf32>
  %coefs_flat_s2 = stablehlo.add %coefs_flat_s1, %coefs_flat_p2 : tensor<3x16xf32>
%coefs_flat_a3_2d = "stablehlo.slice"(%modalities) {start_indices = array<i64: 0, 3>, limit_indices = array<i64: 3, 4>, strides = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %coefs_flat_a3 = stablehlo.reshape %coefs_flat_a3_2d : (tensor<3x1xf32>) -> tensor<3xf32>
  %coefs_flat_w3_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 3>, limit_indices = array<i64: 16, 4>, strides = array<i64: 1, 1>} : (tensor<16x4xf32>) -> tensor<16x1xf32>
  %coefs_flat_w3 = stablehlo.reshape %coefs_flat_w3_2d : (tensor<16x1xf32>) -> tensor<16xf32>
  %coefs_flat_ab3 = stablehlo.broadcast_in_dim %coefs_flat_a3, dims = [0] : (tensor<3xf32>) -> tensor<3x16xf32>
  %coefs_flat_wb3 = stablehlo.broadcast_in_dim %coefs_flat_w3, dims = [1] : (tensor<16xf32>) -> tensor<3x16xf32>
  %coefs_flat_p3_raw = stablehlo.multiply %coefs_flat_ab3, %coefs_flat_wb3 : tensor<3x16xf32>
  %coefs_flat_p3 = stablehlo.optimization_barrier %coefs_flat_p3_raw : tensor<3x16xf32>
  %coefs_flat_s3 = stablehlo.add %coefs_flat_s2, %coefs_flat_p3 : tensor<3x16xf32>
%coefs_flat = stablehlo.reshape %coefs_flat_s3 : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %coefs = stablehlo.reshape %coefs_flat : (tensor<3x16xf32>) -> tensor<3x4x4xf32>
  %c0_3d = "stablehlo.slice"(%coefs) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 3, 4, 1>, strides = array<i64: 1, 1, 1>} : (tensor<3x4x4xf32>) -> tensor<3x4x1xf32>
  %c0 = stablehlo.reshape %c0_3d : (tensor<3x4x1xf32>) -> tensor<3x4xf32>
  %c0_b = stablehlo.broadcast_in_dim %c0, dims = [1, 0] : (tensor<3x4xf32>) -> !s
  %x0 = "stablehlo.slice"(%streams) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x0_b = stablehlo.broadcast_in_dim %x0, dims = [0, 1, 2] : (!one) -> !s
  %p0_raw = stablehlo.multiply %c0_b, %x0_b : !s
  %p0 = stablehlo.optimization_barrier %p0_raw : !s
  %mix0 = stablehlo.reshape %p0 : (!s) -> !s
  %c1_3d = "stablehlo.slice"(%coefs) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 3, 4, 2>, strides = array<i64: 1, 1, 1>} : (tensor<3x4x4xf32>) -> tensor<3x4x1xf32>
  %c1 = stablehlo.reshape %c1_3d : (tensor<3x4x1xf32>) -> tensor<3x4xf32>
  %c1_b = stablehlo.broadcast_in_dim %c1, dims = [1, 0] : (tensor<3x4xf32>) -> !s
  %x1 = "stablehlo.slice"(%streams) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x1_b = stablehlo.broadcast_in_dim %x1, dims = [0, 1, 2] : (!one) -> !s
  %p1_raw = stablehlo.multiply %c1_b, %x1_b : !s
  %p1 = stablehlo.optimization_barrier %p1_raw : !s
  %mix1 = stablehlo.add %mix0, %p1 : !s
  %c2_3d = "stablehlo.slice"(%coefs) {start_indices = array<i64: 0, 0, 2>, limit_indices = array<i64: 3, 4, 3>, strides = array<i64: 1, 1, 1>} : (tensor<3x4x4xf32>) -> tensor<3x4x1xf32>
  %c2 = stablehlo.reshape %c2_3d : (tensor<3x4x1xf32>) -> tensor<3x4xf32>
  %c2_b = stablehlo.broadcast_in_dim %c2, dims = [1, 0] : (tensor<3x4xf32>) -> !s
  %x2 = "stablehlo.slice"(%streams) {start_indices = array<i64: 2, 0, 0>, limit_indices = array<i64: 3, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x2_b = stablehlo.broadcast_in_dim %x2, dims = [0, 1, 2] : (!one) -> !s
  %p2_raw = stablehlo.multiply %c2_b, %x2_b : !s
  %p2 = stablehlo.optimization_barrier %p2_raw : !s
  %mix2 = stablehlo.add %mix1, %p2 : !s
  %c3_3d = "stablehlo.slice"(%coefs) {start_indices = array<i64: 0, 0, 3>, limit_indices = array<i64: 3, 4, 4>, strides = array<i64: 1, 1, 1>} : (tensor<3x4x4xf32>) -> tensor<3x4x1xf32>
  %c3 = stablehlo.reshape %c3_3d : (tensor<3x4x1xf32>) -> tensor<3x4xf32>
  %c3_b = stablehlo.broadcast_in_dim %c3, dims = [1, 0] : (tensor<3x4xf32>) -> !s
  %x3 = "stablehlo.slice"(%streams) {start_indices = array<i64: 3, 0, 0>, limit_indices = array<i64: 4, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x3_b = stablehlo.broadcast_in_dim %x3, dims = [0, 1, 2] : (!one) -> !s
  %p3_raw = stablehlo.multiply %c3_b, %x3_b : !s
  %p3 = stablehlo.optimization_barrier %p3_raw : !s
  %mix3 = stablehlo.add %mix2, %p3 : !s
  %out_raw = stablehlo.add %mix3, %streams : !s
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !s
  return %out : !s
}
