!soft = tensor<1x7x48xf32>
!feat = tensor<1x188x48xf32>
!enc = tensor<1x7x64xf32>
!hid = tensor<1x188x64xf32>
func.func private @audio_output_B1_T7_D64_N48(%soft: !soft, %hard: tensor<128x48xf32>, %encoded: !enc, %count: tensor<1xi32>) -> (!feat, !hid) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %soft_rows = stablehlo.pad %soft, %zero, low = [0, 0, 0], high = [0, 181, 0], interior = [0, 0, 0] : (!soft, tensor<f32>) -> !feat
  %hidden = stablehlo.pad %encoded, %zero, low = [0, 0, 0], high = [0, 181, 0], interior = [0, 0, 0] : (!enc, tensor<f32>) -> !hid
  %pad_row_2d = "stablehlo.slice"(%hard) {start_indices = array<i64: 127, 0>, limit_indices = array<i64: 128, 48>, strides = array<i64: 1, 1>} : (tensor<128x48xf32>) -> tensor<1x48xf32>
  %pad_row = stablehlo.reshape %pad_row_2d : (tensor<1x48xf32>) -> tensor<48xf32>
  %pad_rows = stablehlo.broadcast_in_dim %pad_row, dims = [2] : (tensor<48xf32>) -> !feat
  %row = stablehlo.iota dim = 1 : tensor<1x188x48xi32>
  %limit = stablehlo.broadcast_in_dim %count, dims = [0] : (tensor<1xi32>) -> tensor<1x188x48xi32>
  %keep = stablehlo.compare LT, %row, %limit, SIGNED : (tensor<1x188x48xi32>, tensor<1x188x48xi32>) -> tensor<1x188x48xi1>
  %features = stablehlo.select %keep, %soft_rows, %pad_rows : tensor<1x188x48xi1>, !feat
  return %features, %hidden : !feat, !hid
}
