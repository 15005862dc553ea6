!frames = tensor<1xi32>
!grid = tensor<1x50xi32>
!mask = tensor<1x50xi1>
func.func private @valid_mask_B1_T50_S2(%frames: !frames) -> !mask {
  %t = stablehlo.iota dim = 1 : !grid
  %stride = stablehlo.constant dense<2> : !grid
  %first = stablehlo.multiply %t, %stride : !grid
  %limit = stablehlo.broadcast_in_dim %frames, dims = [0] : (!frames) -> !grid
  %valid = stablehlo.compare LT, %first, %limit, SIGNED : (!grid, !grid) -> !mask
  return %valid : !mask
}
