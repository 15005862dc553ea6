!x = tensor<8x256xf32>
!rows = tensor<8x256xf32>
!y = tensor<8x256xf32>
!y_rows = tensor<8x256xf32>
func.func private @mlx_rms_norm_R8_D256_Ksm90(%x: !x, %w: tensor<256xbf16>) -> !y {
  %rows = stablehlo.reshape %x : (!x) -> !rows
  %out_c0 = arith.constant 8 : i32
%out_c1 = arith.constant 256 : i32
%out_c2 = arith.constant 897988541 : i32
%out_c3 = arith.constant 2139095040 : i32
%out_c4 = arith.constant 1 : i32
%out = hal.dispatch.extern "rms_norm"(%rows, %w, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4) : (!rows, tensor<256xbf16>, i32, i32, i32, i32, i32) -> !y_rows
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/rms_norm_mlx_t32_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 1024>
  %y = stablehlo.reshape %out : (!y_rows) -> !y
  return %y : !y
}
