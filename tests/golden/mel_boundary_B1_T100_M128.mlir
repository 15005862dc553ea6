!mel = tensor<1x100x128xf32>
!nhwc = tensor<1x100x128x1xf32>
func.func private @mel_boundary_B1_T100_M128(%mel: !mel) -> !nhwc {
  %rounded = stablehlo.reduce_precision %mel, format = e8m7 : !mel
  %nhwc = stablehlo.reshape %rounded : (!mel) -> !nhwc
  return %nhwc : !nhwc
}
