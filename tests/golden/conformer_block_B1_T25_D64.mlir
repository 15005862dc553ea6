!x = tensor<1x25x64xf32>
!valid = tensor<1x25xi1>
func.func private @conformer_block_B1_T25_D64(%x: !x, %valid: !valid, %w0: tensor<64xbf16>, %w1: tensor<256x64xbf16>, %w2: tensor<64x256xbf16>, %w3: tensor<64xbf16>, %w4: tensor<64xbf16>, %w5: tensor<64x64xbf16>, %w6: tensor<64x64xbf16>, %w7: tensor<64x64xbf16>, %w8: tensor<32xbf16>, %w9: tensor<64x64xbf16>, %w10: tensor<64x64xbf16>, %w11: tensor<64xbf16>, %w12: tensor<64xbf16>, %w13: tensor<128x64xbf16>, %w14: tensor<64x1x5xbf16>, %w15: tensor<64xbf16>, %w16: tensor<64x64xbf16>, %w17: tensor<64xbf16>, %w18: tensor<256x64xbf16>, %w19: tensor<64x256xbf16>, %w20: tensor<64xbf16>, %w21: tensor<64xbf16>) -> (!x, !x, !x, !x, !x) {
  %ffw_start = func.call @feed_forward_B1_T25_D64(%x, %w0, %w1, %w2, %w3) : (tensor<1x25x64xf32>, tensor<64xbf16>, tensor<256x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %attn = func.call @attention_B1_T25_D64_H2_W12_P12(%ffw_start, %valid, %w4, %w5, %w6, %w7, %w8, %w9, %w10, %w11) : (tensor<1x25x64xf32>, tensor<1x25xi1>, tensor<64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<32xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %masked = func.call @mask_frames_1x25x64(%attn, %valid) : (tensor<1x25x64xf32>, tensor<1x25xi1>) -> (tensor<1x25x64xf32>)
  %lconv = func.call @light_conv_B1_T25_D64_K5_d1k(%masked, %w12, %w13, %w14, %w15, %w16) : (tensor<1x25x64xf32>, tensor<64xbf16>, tensor<128x64xbf16>, tensor<64x1x5xbf16>, tensor<64xbf16>, tensor<64x64xbf16>) -> (tensor<1x25x64xf32>)
  %ffw_end = func.call @feed_forward_B1_T25_D64(%lconv, %w17, %w18, %w19, %w20) : (tensor<1x25x64xf32>, tensor<64xbf16>, tensor<256x64xbf16>, tensor<64x256xbf16>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  %out = func.call @rms_norm_1x25_D64_scaled_clip501502f9(%ffw_end, %w21) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xf32>)
  return %out, %ffw_start, %attn, %lconv, %ffw_end : !x, !x, !x, !x, !x
}
