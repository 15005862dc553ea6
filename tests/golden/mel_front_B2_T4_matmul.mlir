!s = tensor<2x1152xf32>
!n = tensor<2xi32>
func.func private @mel_front_B2_T4_matmul(%samples: !s, %count: !n, %mel_window: tensor<512xf32>, %mel_dft: tensor<512x1026xf32>, %mel_filterbank: tensor<513x128xf32>) -> (tensor<2x4x128xf32>, !n) {
  %frames = func.call @mel_frame_counts_B2(%count) : (tensor<2xi32>) -> (tensor<2xi32>)
  %windowed = func.call @mel_framing_B2_T4_S1152(%samples, %count, %mel_window) : (tensor<2x1152xf32>, tensor<2xi32>, tensor<512xf32>) -> (tensor<2x4x512xf32>)
  %spectrum:2 = func.call @mel_dft_matmul_B2_T4(%windowed, %mel_dft) : (tensor<2x4x512xf32>, tensor<512x1026xf32>) -> (tensor<2x4x513xf32>, tensor<2x4x513xf32>)
  %magnitude = func.call @mel_magnitude_B2_T4(%spectrum#0, %spectrum#1) : (tensor<2x4x513xf32>, tensor<2x4x513xf32>) -> (tensor<2x4x513xf32>)
  %log_mel = func.call @mel_log_B2_T4_M128(%magnitude, %mel_filterbank) : (tensor<2x4x513xf32>, tensor<513x128xf32>) -> (tensor<2x4x128xf32>)
  return %log_mel, %frames : tensor<2x4x128xf32>, !n
}
