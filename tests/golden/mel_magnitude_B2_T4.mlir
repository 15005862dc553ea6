!spectrum = tensor<2x4x513xf32>
!wide = tensor<2x4x513xf64>
func.func private @mel_magnitude_B2_T4(%re: !spectrum, %im: !spectrum) -> !spectrum {
  %re64 = stablehlo.convert %re : (!spectrum) -> !wide
  %im64 = stablehlo.convert %im : (!spectrum) -> !wide
  %re_sq = stablehlo.multiply %re64, %re64 : !wide
  %im_sq = stablehlo.multiply %im64, %im64 : !wide
  %power = stablehlo.add %re_sq, %im_sq : !wide
  %root = stablehlo.sqrt %power : !wide
  %magnitude = stablehlo.convert %root : (!wide) -> !spectrum
  return %magnitude : !spectrum
}
