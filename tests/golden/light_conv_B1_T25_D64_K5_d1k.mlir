!x = tensor<1x25x64xf32>
!g = tensor<1x25x128xf32>
!wn = tensor<64xbf16>
!padded = tensor<1x29x64xf32>
!tap = tensor<1x25x64xf32>
func.func private @light_conv_B1_T25_D64_K5_d1k(%x: !x, %pre_norm: !wn, %w_start: tensor<128x64xbf16>, %w_dw: tensor<64x1x5xbf16>, %conv_norm: !wn, %w_end: tensor<64x64xbf16>) -> !x {
  %normed = func.call @rms_norm_1x25_D64_scaled(%x, %pre_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %gates = func.call @linear_1x25_K64_N128_Ibf16(%normed, %w_start) : (tensor<1x25x64xf32>, tensor<128x64xbf16>) -> (tensor<1x25x128xf32>)
  %w_dk = stablehlo.reshape %w_dw : (tensor<64x1x5xbf16>) -> tensor<64x5xbf16>
  %w_kd = stablehlo.transpose %w_dk, dims = [1, 0] : (tensor<64x5xbf16>) -> tensor<5x64xbf16>
  %taps = stablehlo.convert %w_kd : (tensor<5x64xbf16>) -> tensor<5x64xf32>
  %value = "stablehlo.slice"(%gates) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 25, 64>, strides = array<i64: 1, 1, 1>} : (!g) -> !x
  %gate = "stablehlo.slice"(%gates) {start_indices = array<i64: 0, 0, 64>, limit_indices = array<i64: 1, 25, 128>, strides = array<i64: 1, 1, 1>} : (!g) -> !x
  %sigmoid = stablehlo.logistic %gate : !x
  %glu_raw = stablehlo.multiply %value, %sigmoid : !x
  %glu = stablehlo.reduce_precision %glu_raw, format = e8m7 : !x
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %padded = stablehlo.pad %glu, %zero, low = [0, 4, 0], high = [0, 0, 0], interior = [0, 0, 0] : (!x, tensor<f32>) -> !padded
  %w0_row = "stablehlo.slice"(%taps) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 64>, strides = array<i64: 1, 1>} : (tensor<5x64xf32>) -> tensor<1x64xf32>
  %w0 = stablehlo.reshape %w0_row : (tensor<1x64xf32>) -> tensor<64xf32>
  %w0_b = stablehlo.broadcast_in_dim %w0, dims = [2] : (tensor<64xf32>) -> !tap
  %in0 = "stablehlo.slice"(%padded) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 25, 64>, strides = array<i64: 1, 1, 1>} : (!padded) -> !tap
  %prod0 = stablehlo.multiply %in0, %w0_b : !tap
  %w1_row = "stablehlo.slice"(%taps) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (tensor<5x64xf32>) -> tensor<1x64xf32>
  %w1 = stablehlo.reshape %w1_row : (tensor<1x64xf32>) -> tensor<64xf32>
  %w1_b = stablehlo.broadcast_in_dim %w1, dims = [2] : (tensor<64xf32>) -> !tap
  %in1 = "stablehlo.slice"(%padded) {start_indices = array<i64: 0, 1, 0>, limit_indices = array<i64: 1, 26, 64>, strides = array<i64: 1, 1, 1>} : (!padded) -> !tap
  %prod1 = stablehlo.multiply %in1, %w1_b : !tap
  %acc1 = stablehlo.add %prod0, %prod1 : !tap
  %w2_row = "stablehlo.slice"(%taps) {start_indices = array<i64: 2, 0>, limit_indices = array<i64: 3, 64>, strides = array<i64: 1, 1>} : (tensor<5x64xf32>) -> tensor<1x64xf32>
  %w2 = stablehlo.reshape %w2_row : (tensor<1x64xf32>) -> tensor<64xf32>
  %w2_b = stablehlo.broadcast_in_dim %w2, dims = [2] : (tensor<64xf32>) -> !tap
  %in2 = "stablehlo.slice"(%padded) {start_indices = array<i64: 0, 2, 0>, limit_indices = array<i64: 1, 27, 64>, strides = array<i64: 1, 1, 1>} : (!padded) -> !tap
  %prod2 = stablehlo.multiply %in2, %w2_b : !tap
  %acc2 = stablehlo.add %acc1, %prod2 : !tap
  %w3_row = "stablehlo.slice"(%taps) {start_indices = array<i64: 3, 0>, limit_indices = array<i64: 4, 64>, strides = array<i64: 1, 1>} : (tensor<5x64xf32>) -> tensor<1x64xf32>
  %w3 = stablehlo.reshape %w3_row : (tensor<1x64xf32>) -> tensor<64xf32>
  %w3_b = stablehlo.broadcast_in_dim %w3, dims = [2] : (tensor<64xf32>) -> !tap
  %in3 = "stablehlo.slice"(%padded) {start_indices = array<i64: 0, 3, 0>, limit_indices = array<i64: 1, 28, 64>, strides = array<i64: 1, 1, 1>} : (!padded) -> !tap
  %prod3 = stablehlo.multiply %in3, %w3_b : !tap
  %acc3 = stablehlo.add %acc2, %prod3 : !tap
  %w4_row = "stablehlo.slice"(%taps) {start_indices = array<i64: 4, 0>, limit_indices = array<i64: 5, 64>, strides = array<i64: 1, 1>} : (tensor<5x64xf32>) -> tensor<1x64xf32>
  %w4 = stablehlo.reshape %w4_row : (tensor<1x64xf32>) -> tensor<64xf32>
  %w4_b = stablehlo.broadcast_in_dim %w4, dims = [2] : (tensor<64xf32>) -> !tap
  %in4 = "stablehlo.slice"(%padded) {start_indices = array<i64: 0, 4, 0>, limit_indices = array<i64: 1, 29, 64>, strides = array<i64: 1, 1, 1>} : (!padded) -> !tap
  %prod4 = stablehlo.multiply %in4, %w4_b : !tap
  %acc4 = stablehlo.add %acc3, %prod4 : !tap
  %conv = stablehlo.reduce_precision %acc4, format = e8m7 : !x
  %conv_normed = func.call @rms_norm_1x25_D64_scaled_clip501502f9(%conv, %conv_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %act_gate = stablehlo.logistic %conv_normed : !x
  %act_raw = stablehlo.multiply %conv_normed, %act_gate : !x
  %act = stablehlo.reduce_precision %act_raw, format = e8m7 : !x
  %out = func.call @linear_1x25_K64_N64_Ibf16(%act, %w_end) : (tensor<1x25x64xf32>, tensor<64x64xbf16>) -> (tensor<1x25x64xf32>)
  %sum = stablehlo.add %out, %x : !x
  %y = stablehlo.reduce_precision %sum, format = e8m7 : !x
  return %y : !x
}
