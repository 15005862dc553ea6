!x = tensor<1x25x64xf32>
!h = tensor<1x25x256xf32>
!wn = tensor<64xbf16>
func.func private @feed_forward_B1_T25_D64(%x: !x, %pre_norm: !wn, %w1: tensor<256x64xbf16>, %w2: tensor<64x256xbf16>, %post_norm: !wn) -> !x {
  %normed = func.call @rms_norm_1x25_D64_scaled_clip501502f9_Ksm90_bf16(%x, %pre_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xbf16>)
  %up = func.call @linear_1x25_K64_N256_Ibf16_Xbf16_Ksm90_Ybf16(%normed, %w1) : (tensor<1x25x64xbf16>, tensor<256x64xbf16>) -> (tensor<1x25x256xbf16>)
  %up_flat = stablehlo.reshape %up : (tensor<1x25x256xbf16>) -> tensor<6400xbf16>
  %act_flat_c0 = arith.constant 6400 : i32
%act_flat = hal.dispatch.extern "silu_bf16"(%up_flat, %act_flat_c0) : (tensor<6400xbf16>, i32) -> tensor<6400xbf16>
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/silu_bf16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 0>
  %act = stablehlo.reshape %act_flat : (tensor<6400xbf16>) -> tensor<1x25x256xbf16>
  %down = func.call @linear_1x25_K256_N64_Ibf16_Xbf16_Ksm90_Ybf16(%act, %w2) : (tensor<1x25x256xbf16>, tensor<64x256xbf16>) -> (tensor<1x25x64xbf16>)
  %y = func.call @rms_norm_1x25_D64_scaled_clip501502f9_res0.5_Xbf16_Ksm90(%down, %post_norm, %x) : (tensor<1x25x64xbf16>, tensor<64xbf16>, tensor<1x25x64xf32>) -> (tensor<1x25x64xf32>)
  return %y : !x
}
