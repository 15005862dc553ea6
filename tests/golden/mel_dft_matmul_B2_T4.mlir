!frames = tensor<2x4x512xf32>
!rows = tensor<8x512xf32>
!table = tensor<512x1026xf32>
!acc = tensor<8x1026xf32>
!half = tensor<8x513xf32>
!spectrum = tensor<2x4x513xf32>
func.func private @mel_dft_matmul_B2_T4(%frames: !frames, %table: !table) -> (!spectrum, !spectrum) {
  %rows = stablehlo.reshape %frames : (!frames) -> !rows
  %acc = stablehlo.dot_general %rows, %table, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (!rows, !table) -> !acc
  %re_rows = "stablehlo.slice"(%acc) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 8, 513>, strides = array<i64: 1, 1>} : (!acc) -> !half
  %im_rows = "stablehlo.slice"(%acc) {start_indices = array<i64: 0, 513>, limit_indices = array<i64: 8, 1026>, strides = array<i64: 1, 1>} : (!acc) -> !half
  %re = stablehlo.reshape %re_rows : (!half) -> !spectrum
  %im = stablehlo.reshape %im_rows : (!half) -> !spectrum
  return %re, %im : !spectrum, !spectrum
}
