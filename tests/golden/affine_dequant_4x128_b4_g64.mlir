!words = tensor<4x16xui32>
!lanes = tensor<4x16x8xui32>
!meta = tensor<4x2xbf16>
!grouped = tensor<4x2x64xf32>
!w32 = tensor<4x128xf32>
!w = tensor<4x128xbf16>
func.func private @affine_dequant_4x128_b4_g64(%words: !words, %scales: !meta, %biases: !meta) -> !w {
  %spread = stablehlo.broadcast_in_dim %words, dims = [0, 1] : (!words) -> !lanes
  %lane = stablehlo.iota dim = 2 : !lanes
  %bits = stablehlo.constant dense<4> : !lanes
  %shift = stablehlo.multiply %lane, %bits : !lanes
  %shifted = stablehlo.shift_right_logical %spread, %shift : !lanes
  %mask = stablehlo.constant dense<15> : !lanes
  %q_lanes = stablehlo.and %shifted, %mask : !lanes
  %q_int = stablehlo.reshape %q_lanes : (!lanes) -> tensor<4x128xui32>
  %q = stablehlo.convert %q_int : (tensor<4x128xui32>) -> !w32
  %s32 = stablehlo.convert %scales : (!meta) -> tensor<4x2xf32>
  %b32 = stablehlo.convert %biases : (!meta) -> tensor<4x2xf32>
  %s_g = stablehlo.broadcast_in_dim %s32, dims = [0, 1] : (tensor<4x2xf32>) -> !grouped
  %b_g = stablehlo.broadcast_in_dim %b32, dims = [0, 1] : (tensor<4x2xf32>) -> !grouped
  %s = stablehlo.reshape %s_g : (!grouped) -> !w32
  %b = stablehlo.reshape %b_g : (!grouped) -> !w32
  %scaled = stablehlo.multiply %q, %s : !w32
  %scaled_bf16 = stablehlo.reduce_precision %scaled, format = e8m7 : !w32
  %sum = stablehlo.add %scaled_bf16, %b : !w32
  %sum_bf16 = stablehlo.reduce_precision %sum, format = e8m7 : !w32
  %w = stablehlo.convert %sum_bf16 : (!w32) -> !w
  return %w : !w
}
