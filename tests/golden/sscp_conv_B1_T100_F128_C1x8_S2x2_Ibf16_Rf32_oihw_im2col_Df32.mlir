!x = tensor<1x100x128x1xf32>
!x_op = tensor<1x100x128x1xf32>
!x_pad = tensor<1x102x130x1xf32>
!tap = tensor<1x50x64x1xf32>
!tap1 = tensor<1x50x64x1x1xf32>
!taps = tensor<1x50x64x9x1xf32>
!cols = tensor<3200x9xf32>
!w = tensor<8x1x3x3xbf16>
!w_op = tensor<8x1x3x3xf32>
!ohwi = tensor<8x3x3x1xf32>
!w_rows = tensor<8x9xf32>
!acc = tensor<3200x8xf32>
!conv = tensor<1x50x64x8xf32>
!y = tensor<1x50x64x8xf32>
func.func private @sscp_conv_B1_T100_F128_C1x8_S2x2_Ibf16_Rf32_oihw_im2col_Df32(%x: !x, %w: !w) -> !y {
  %x_op = stablehlo.reduce_precision %x, format = e8m7 : !x_op
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %x_pad = stablehlo.pad %x_op, %zero, low = [0, 0, 1, 0], high = [0, 2, 1, 0], interior = [0, 0, 0, 0] : (!x_op, tensor<f32>) -> !x_pad
  %tap00 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 1, 99, 127, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap00_1 = stablehlo.reshape %tap00 : (!tap) -> !tap1
  %tap01 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 0, 1, 0>, limit_indices = array<i64: 1, 99, 128, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap01_1 = stablehlo.reshape %tap01 : (!tap) -> !tap1
  %tap02 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 0, 2, 0>, limit_indices = array<i64: 1, 99, 129, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap02_1 = stablehlo.reshape %tap02 : (!tap) -> !tap1
  %tap10 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 1, 0, 0>, limit_indices = array<i64: 1, 100, 127, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap10_1 = stablehlo.reshape %tap10 : (!tap) -> !tap1
  %tap11 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 1, 1, 0>, limit_indices = array<i64: 1, 100, 128, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap11_1 = stablehlo.reshape %tap11 : (!tap) -> !tap1
  %tap12 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 1, 2, 0>, limit_indices = array<i64: 1, 100, 129, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap12_1 = stablehlo.reshape %tap12 : (!tap) -> !tap1
  %tap20 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 2, 0, 0>, limit_indices = array<i64: 1, 101, 127, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap20_1 = stablehlo.reshape %tap20 : (!tap) -> !tap1
  %tap21 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 2, 1, 0>, limit_indices = array<i64: 1, 101, 128, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap21_1 = stablehlo.reshape %tap21 : (!tap) -> !tap1
  %tap22 = "stablehlo.slice"(%x_pad) {start_indices = array<i64: 0, 2, 2, 0>, limit_indices = array<i64: 1, 101, 129, 1>, strides = array<i64: 1, 2, 2, 1>} : (!x_pad) -> !tap
  %tap22_1 = stablehlo.reshape %tap22 : (!tap) -> !tap1
  %taps = stablehlo.concatenate %tap00_1, %tap01_1, %tap02_1, %tap10_1, %tap11_1, %tap12_1, %tap20_1, %tap21_1, %tap22_1, dim = 3 : (!tap1, !tap1, !tap1, !tap1, !tap1, !tap1, !tap1, !tap1, !tap1) -> !taps
  %cols = stablehlo.reshape %taps : (!taps) -> !cols
  %w_op = stablehlo.convert %w : (!w) -> !w_op
  %ohwi = stablehlo.transpose %w_op, dims = [0, 2, 3, 1] : (!w_op) -> !ohwi
  %w_rows = stablehlo.reshape %ohwi : (!ohwi) -> !w_rows
  %acc = stablehlo.dot_general %cols, %w_rows, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (!cols, !w_rows) -> !acc
  %conv = stablehlo.reshape %acc : (!acc) -> !conv
  %y = stablehlo.reduce_precision %conv, format = e8m7 : !y
  return %y : !y
}
