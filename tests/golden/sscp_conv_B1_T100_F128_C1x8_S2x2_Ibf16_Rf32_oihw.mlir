!x = tensor<1x100x128x1xf32>
!x_op = tensor<1x100x128x1xbf16>
!x_pad = tensor<1x102x130x1xbf16>
!w = tensor<8x1x3x3xbf16>
!w_op = tensor<8x1x3x3xbf16>
!hwio = tensor<3x3x1x8xbf16>
!conv = tensor<1x50x64x8xf32>
!y = tensor<1x50x64x8xf32>
func.func private @sscp_conv_B1_T100_F128_C1x8_S2x2_Ibf16_Rf32_oihw(%x: !x, %w: !w) -> !y {
  %x_op = stablehlo.convert %x : (!x) -> !x_op
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
  %x_pad = stablehlo.pad %x_op, %zero, low = [0, 0, 1, 0], high = [0, 2, 1, 0], interior = [0, 0, 0, 0] : (!x_op, tensor<bf16>) -> !x_pad
  %w_op = stablehlo.convert %w : (!w) -> !w_op
  %hwio = stablehlo.transpose %w_op, dims = [2, 3, 1, 0] : (!w_op) -> !hwio
  %conv = stablehlo.convolution(%x_pad, %hwio) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (!x_pad, !hwio) -> !conv
  %y = stablehlo.reduce_precision %conv, format = e8m7 : !y
  return %y : !y
}
