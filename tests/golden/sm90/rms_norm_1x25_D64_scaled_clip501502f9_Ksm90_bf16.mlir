!x = tensor<1x25x64xf32>
!rows = tensor<25x64xf32>
!y = tensor<1x25x64xbf16>
!y_rows = tensor<25x64xbf16>
func.func private @rms_norm_1x25_D64_scaled_clip501502f9_Ksm90_bf16(%x: !x, %w: tensor<64xbf16>) -> !y {
  %rows = stablehlo.reshape %x : (!x) -> !rows
  %out_c0 = arith.constant 25 : i32
%out_c1 = arith.constant 64 : i32
%out_c2 = arith.constant 897988541 : i32
%out_c3 = arith.constant 1343554297 : i32
%out_c4 = arith.constant 1 : i32
%out = hal.dispatch.extern "rms_norm"(%rows, %w, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4) : (!rows, tensor<64xbf16>, i32, i32, i32, i32, i32) -> !y_rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_bf16_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>
  %y = stablehlo.reshape %out : (!y_rows) -> !y
  return %y : !y
}
