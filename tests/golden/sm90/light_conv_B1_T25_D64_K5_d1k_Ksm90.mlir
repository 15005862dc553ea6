!x = tensor<1x25x64xf32>
!g = tensor<1x25x128xf32>
!wn = tensor<64xbf16>
!padded = tensor<1x29x64xf32>
!tap = tensor<1x25x64xf32>
func.func private @light_conv_B1_T25_D64_K5_d1k_Ksm90(%x: !x, %pre_norm: !wn, %w_start: tensor<128x64xbf16>, %w_dw: tensor<64x1x5xbf16>, %conv_norm: !wn, %w_end: tensor<64x64xbf16>) -> !x {
  %normed = func.call @rms_norm_1x25_D64_scaled_Ksm90_bf16(%x, %pre_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xbf16>)
  %gates = func.call @linear_1x25_K64_N128_Ibf16_Xbf16_Ksm90_Ybf16(%normed, %w_start) : (tensor<1x25x64xbf16>, tensor<128x64xbf16>) -> (tensor<1x25x128xbf16>)
  %w_dk = stablehlo.reshape %w_dw : (tensor<64x1x5xbf16>) -> tensor<64x5xbf16>
  %w_kd = stablehlo.transpose %w_dk, dims = [1, 0] : (tensor<64x5xbf16>) -> tensor<5x64xbf16>
  %taps = stablehlo.convert %w_kd : (tensor<5x64xbf16>) -> tensor<5x64xf32>
  %conv_c0 = arith.constant 25 : i32
%conv_c1 = arith.constant 64 : i32
%conv_c2 = arith.constant 5 : i32
%conv = hal.dispatch.extern "glu_depthwise"(%gates, %taps, %conv_c0, %conv_c1, %conv_c2) : (tensor<1x25x128xbf16>, tensor<5x64xf32>, i32, i32, i32) -> !x
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/glu_depthwise_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
  %act = func.call @rms_norm_1x25_D64_scaled_clip501502f9_Ksm90_silu_bf16(%conv, %conv_norm) : (tensor<1x25x64xf32>, tensor<64xbf16>) -> (tensor<1x25x64xbf16>)
  %out = func.call @linear_1x25_K64_N64_Ibf16_Xbf16_Ksm90_Ybf16(%act, %w_end) : (tensor<1x25x64xbf16>, tensor<64x64xbf16>) -> (tensor<1x25x64xbf16>)
  %out_f32 = stablehlo.convert %out : (tensor<1x25x64xbf16>) -> !x
  %sum = stablehlo.add %out_f32, %x : !x
  %y = stablehlo.reduce_precision %sum, format = e8m7 : !x
  return %y : !x
}
