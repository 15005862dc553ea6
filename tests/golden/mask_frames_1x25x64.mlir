!x = tensor<1x25x64xf32>
!mask = tensor<1x25xi1>
func.func private @mask_frames_1x25x64(%x: !x, %valid: !mask) -> !x {
  %zero = stablehlo.constant dense<0.000000e+00> : !x
  %valid_b = stablehlo.broadcast_in_dim %valid, dims = [0, 1] : (!mask) -> tensor<1x25x64xi1>
  %y = stablehlo.select %valid_b, %x, %zero : tensor<1x25x64xi1>, !x
  return %y : !x
}
