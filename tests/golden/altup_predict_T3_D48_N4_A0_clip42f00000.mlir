!s = tensor<4x3x48xf32>
!one = tensor<1x3x48xf32>
!x = tensor<3x48xf32>
!p = tensor<4x4x3x48xf32>
func.func private @altup_predict_T3_D48_N4_A0_clip42f00000(%streams: !s, %w_norm: tensor<48xbf16>, %w_router: tensor<4x48xbf16>, %w_coefs: tensor<16x4xbf16>) -> !s {
  %active_3d = "stablehlo.slice"(%streams) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %active = stablehlo.reshape %active_3d : (!one) -> !x
  %modalities = func.call @altup_router_T3_D48_N4(%active, %w_norm, %w_router) : (tensor<3x48xf32>, tensor<48xbf16>, tensor<4x48xbf16>) -> (tensor<3x4xf32>)
  %w_f32 = stablehlo.convert %w_coefs : (tensor<16x4xbf16>) -> tensor<16x4xf32>
  %w_lo = stablehlo.constant dense<0xC2F00000> : tensor<f32>
  %w_hi = stablehlo.constant dense<0x42F00000> : tensor<f32>
  %w = stablehlo.clamp %w_lo, %w_f32, %w_hi : (tensor<f32>, tensor<16x4xf32>, tensor<f32>) -> tensor<16x4xf32>
  %coefs_flat_ab = stablehlo.broadcast_in_dim %modalities, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3x16xf32>
  %coefs_flat_wb = stablehlo.broadcast_in_dim %w, dims = [2, 0] : (tensor<16x4xf32>) -> tensor<4x3x16xf32>
  %coefs_flat_p_raw = stablehlo.multiply %coefs_flat_ab, %coefs_flat_wb : tensor<4x3x16xf32>
  %coefs_flat_p = stablehlo.optimization_barrier %coefs_flat_p_raw : tensor<4x3x16xf32>
  %coefs_flat_p0_3d = "stablehlo.slice"(%coefs_flat_p) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x16xf32>) -> tensor<1x3x16xf32>
  %coefs_flat_p0 = stablehlo.reshape %coefs_flat_p0_3d : (tensor<1x3x16xf32>) -> tensor<3x16xf32>
  %coefs_flat_s0 = stablehlo.reshape %coefs_flat_p0 : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %coefs_flat_p1_3d = "stablehlo.slice"(%coefs_flat_p) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x16xf32>) -> tensor<1x3x16xf32>
  %coefs_flat_p1 = stablehlo.reshape %coefs_flat_p1_3d : (tensor<1x3x16xf32>) -> tensor<3x16xf32>
  %coefs_flat_s1 = stablehlo.add %coefs_flat_s0, %coefs_flat_p1 : tensor<3x16xf32>
  %coefs_flat_p2_3d = "stablehlo.slice"(%coefs_flat_p) {start_indices = array<i64: 2, 0, 0>, limit_indices = array<i64: 3, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x16xf32>) -> tensor<1x3x16xf32>
  %coefs_flat_p2 = stablehlo.reshape %coefs_flat_p2_3d : (tensor<1x3x16xf32>) -> tensor<3x16xf32>
  %coefs_flat_s2 = stablehlo.add %coefs_flat_s1, %coefs_flat_p2 : tensor<3x16xf32>
  %coefs_flat_p3_3d = "stablehlo.slice"(%coefs_flat_p) {start_indices = array<i64: 3, 0, 0>, limit_indices = array<i64: 4, 3, 16>, strides = array<i64: 1, 1, 1>} : (tensor<4x3x16xf32>) -> tensor<1x3x16xf32>
  %coefs_flat_p3 = stablehlo.reshape %coefs_flat_p3_3d : (tensor<1x3x16xf32>) -> tensor<3x16xf32>
  %coefs_flat_s3 = stablehlo.add %coefs_flat_s2, %coefs_flat_p3 : tensor<3x16xf32>
%coefs_flat = stablehlo.reshape %coefs_flat_s3 : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %coefs = stablehlo.reshape %coefs_flat : (tensor<3x16xf32>) -> tensor<3x4x4xf32>%coefs_b = stablehlo.broadcast_in_dim %coefs, dims = [2, 1, 0] : (tensor<3x4x4xf32>) -> !p
  %streams_b = stablehlo.broadcast_in_dim %streams, dims = [0, 2, 3] : (!s) -> !p
  %p_raw = stablehlo.multiply %coefs_b, %streams_b : !p
  %p = stablehlo.optimization_barrier %p_raw : !p
  %p0_4d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 1, 4, 3, 48>, strides = array<i64: 1, 1, 1, 1>} : (!p) -> tensor<1x4x3x48xf32>
  %p0 = stablehlo.reshape %p0_4d : (tensor<1x4x3x48xf32>) -> !s
  %mix0 = stablehlo.reshape %p0 : (!s) -> !s
  %p1_4d = "stablehlo.slice"(%p) {start_indices = array<i64: 1, 0, 0, 0>, limit_indices = array<i64: 2, 4, 3, 48>, strides = array<i64: 1, 1, 1, 1>} : (!p) -> tensor<1x4x3x48xf32>
  %p1 = stablehlo.reshape %p1_4d : (tensor<1x4x3x48xf32>) -> !s
  %mix1 = stablehlo.add %mix0, %p1 : !s
  %p2_4d = "stablehlo.slice"(%p) {start_indices = array<i64: 2, 0, 0, 0>, limit_indices = array<i64: 3, 4, 3, 48>, strides = array<i64: 1, 1, 1, 1>} : (!p) -> tensor<1x4x3x48xf32>
  %p2 = stablehlo.reshape %p2_4d : (tensor<1x4x3x48xf32>) -> !s
  %mix2 = stablehlo.add %mix1, %p2 : !s
  %p3_4d = "stablehlo.slice"(%p) {start_indices = array<i64: 3, 0, 0, 0>, limit_indices = array<i64: 4, 4, 3, 48>, strides = array<i64: 1, 1, 1, 1>} : (!p) -> tensor<1x4x3x48xf32>
  %p3 = stablehlo.reshape %p3_4d : (tensor<1x4x3x48xf32>) -> !s
  %mix3 = stablehlo.add %mix2, %p3 : !s
  %out_raw = stablehlo.add %mix3, %streams : !s
  %out = stablehlo.reduce_precision %out_raw, format = e8m7 : !s
  return %out : !s
}
