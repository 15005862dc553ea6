!g = tensor<2x16384xf32>
func.func private @gaussian_topk_T2_F16384_s0.95_Ksm90(%g: !g) -> !g {
  %out_c0 = arith.constant 16384 : i32
%out_c1 = arith.constant 2 : i32
%out_c2 = arith.constant 947912704 : i32
%out_c3 = arith.constant 1070792704 : i32
%out = hal.dispatch.extern "gaussian_topk"(%g, %out_c0, %out_c1, %out_c2, %out_c3) : (!g, i32, i32, i32, i32) -> !g
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gaussian_topk_t1024_sm90.ptx"}>]})
    <workgroup_size = [1024 : index, 1 : index, 1 : index], workgroup_local_memory = 2048>
  return %out : !g
}
