!frames = tensor<2x4x512xf32>
!padded = tensor<2x4x1024xf32>
!complex = tensor<2x4x513xcomplex<f32>>
!spectrum = tensor<2x4x513xf32>
func.func private @mel_dft_rfft_B2_T4(%frames: !frames) -> (!spectrum, !spectrum) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %padded = stablehlo.pad %frames, %zero, low = [0, 0, 0], high = [0, 0, 512], interior = [0, 0, 0] : (!frames, tensor<f32>) -> !padded
  %spectrum = stablehlo.fft %padded, type = RFFT, length = [1024] : (!padded) -> !complex
  %re = stablehlo.real %spectrum : (!complex) -> !spectrum
  %im = stablehlo.imag %spectrum : (!complex) -> !spectrum
  return %re, %im : !spectrum, !spectrum
}
