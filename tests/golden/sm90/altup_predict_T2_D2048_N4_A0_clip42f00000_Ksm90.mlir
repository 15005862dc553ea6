!s = tensor<4x2x2048xf32>
func.func private @altup_predict_T2_D2048_N4_A0_clip42f00000_Ksm90(%streams: !s, %w_norm: tensor<2048xbf16>, %w_router: tensor<4x2048xbf16>, %w_coefs: tensor<16x4xbf16>) -> !s {
  %out_c0 = arith.constant 2 : i32
%out_c1 = arith.constant 2048 : i32
%out_c2 = arith.constant 0 : i32
%out_c3 = arith.constant 897988541 : i32
%out_c4 = arith.constant 973078528 : i32
%out_c5 = arith.constant 1123024896 : i32
%out_c6 = arith.constant 1 : i32
%out_c7 = arith.constant 1 : i32
%out_c8 = arith.constant 1 : i32
%out = hal.dispatch.extern "altup_predict"(%streams, %w_norm, %w_router, %w_coefs, %out_c0, %out_c1, %out_c2, %out_c3, %out_c4, %out_c5, %out_c6, %out_c7, %out_c8) : (!s, tensor<2048xbf16>, tensor<4x2048xbf16>, tensor<16x4xbf16>, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !s
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 2 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 9, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/altup_predict_t256_sm90.ptx"}>]})
    <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
  return %out : !s
}
