!x = tensor<4x128xf32>
!out = tensor<4xf32>
func.func private @lane_xor_sum_R4_W128_X4_Ksm90(%x: !x) -> !out {
  %sum_c0 = arith.constant 4 : i32
%sum_c1 = arith.constant 128 : i32
%sum_c2 = arith.constant 4 : i32
%sum_c3 = arith.constant 0 : i32
%sum = hal.dispatch.extern "lane_xor_sum"(%x, %sum_c0, %sum_c1, %sum_c2, %sum_c3) : (!x, i32, i32, i32, i32) -> !out
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 1 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/lane_xor_sum_t32_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 8192>
  return %sum : !out
}
