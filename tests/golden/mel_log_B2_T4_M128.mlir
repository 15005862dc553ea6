!spectrum = tensor<2x4x513xf32>
!rows = tensor<8x513xf32>
!fb = tensor<513x128xf32>
!mel_rows = tensor<8x128xf32>
!mel = tensor<2x4x128xf32>
!wide = tensor<2x4x128xf64>
func.func private @mel_log_B2_T4_M128(%magnitude: !spectrum, %filterbank: !fb) -> !mel {
  %rows = stablehlo.reshape %magnitude : (!spectrum) -> !rows
  %power_rows = stablehlo.dot_general %rows, %filterbank, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (!rows, !fb) -> !mel_rows
  %power = stablehlo.reshape %power_rows : (!mel_rows) -> !mel
  %power64 = stablehlo.convert %power : (!mel) -> !wide
  %floor_s = stablehlo.constant dense<0x3EE4F8B588E368F1> : tensor<f64>
  %floor = stablehlo.broadcast_in_dim %floor_s, dims = [] : (tensor<f64>) -> !wide
  %floored = stablehlo.maximum %power64, %floor : !wide
  %log64 = stablehlo.log %floored : !wide
  %log = stablehlo.convert %log64 : (!wide) -> !mel
  return %log : !mel
}
