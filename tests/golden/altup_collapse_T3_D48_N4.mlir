!x = tensor<3x48xf32>
!one = tensor<1x3x48xf32>
!s = tensor<4x3x48xf32>
!w = tensor<48x48xbf16>
func.func private @altup_collapse_T3_D48_N4(%streams: !s, %w0: !w, %w1: !w, %w2: !w) -> !x {
  %x0_3d = "stablehlo.slice"(%streams) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x0 = stablehlo.reshape %x0_3d : (!one) -> !x
  %x1_3d = "stablehlo.slice"(%streams) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x1 = stablehlo.reshape %x1_3d : (!one) -> !x
  %x2_3d = "stablehlo.slice"(%streams) {start_indices = array<i64: 2, 0, 0>, limit_indices = array<i64: 3, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x2 = stablehlo.reshape %x2_3d : (!one) -> !x
  %x3_3d = "stablehlo.slice"(%streams) {start_indices = array<i64: 3, 0, 0>, limit_indices = array<i64: 4, 3, 48>, strides = array<i64: 1, 1, 1>} : (!s) -> !one
  %x3 = stablehlo.reshape %x3_3d : (!one) -> !x
  %target = func.call @rms_magnitude_R3_D48(%x0) : (tensor<3x48xf32>) -> (tensor<3xf32>)
  %projected1 = func.call @linear_3_K48_N48_Ibf16(%x1, %w0) : (tensor<3x48xf32>, tensor<48x48xbf16>) -> (tensor<3x48xf32>)
  %scaled1 = func.call @altup_rescale_T3_D48(%projected1, %target) : (tensor<3x48xf32>, tensor<3xf32>) -> (tensor<3x48xf32>)
  %total1 = stablehlo.add %x0, %scaled1 : !x
  %projected2 = func.call @linear_3_K48_N48_Ibf16(%x2, %w1) : (tensor<3x48xf32>, tensor<48x48xbf16>) -> (tensor<3x48xf32>)
  %scaled2 = func.call @altup_rescale_T3_D48(%projected2, %target) : (tensor<3x48xf32>, tensor<3xf32>) -> (tensor<3x48xf32>)
  %total2 = stablehlo.add %total1, %scaled2 : !x
  %projected3 = func.call @linear_3_K48_N48_Ibf16(%x3, %w2) : (tensor<3x48xf32>, tensor<48x48xbf16>) -> (tensor<3x48xf32>)
  %scaled3 = func.call @altup_rescale_T3_D48(%projected3, %target) : (tensor<3x48xf32>, tensor<3xf32>) -> (tensor<3x48xf32>)
  %total3 = stablehlo.add %total2, %scaled3 : !x
  %sum = stablehlo.reduce_precision %total3, format = e8m7 : !x
  %scale_s = stablehlo.constant dense<0x3E800000> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %scale_s, dims = [] : (tensor<f32>) -> tensor<3x48xf32>
  %mean_raw = stablehlo.multiply %sum, %scale : !x
  %mean = stablehlo.reduce_precision %mean_raw, format = e8m7 : !x
  return %mean : !x
}
