!x = tensor<2x2048xbf16>
!x_op = tensor<2x2048xbf16>
!flat = tensor<65536xf32>
func.func private @decode_linears_T2_K2048_N16384x16384_P1_Xbf16(%x: !x, %w0: tensor<16384x2048xbf16>, %w1: tensor<16384x2048xbf16>) -> (tensor<1x2x16384xf32>, tensor<1x2x16384xf32>) {
  %rhs0 = stablehlo.convert %w0 : (tensor<16384x2048xbf16>) -> tensor<16384x2048xbf16>
  %rhs1 = stablehlo.convert %w1 : (tensor<16384x2048xbf16>) -> tensor<16384x2048xbf16>
  %flat_c0 = arith.constant 2 : i32
%flat_c1 = arith.constant 16384 : i32
%flat_c2 = arith.constant 16384 : i32
%flat_c3 = arith.constant 2048 : i32
%flat_c4 = arith.constant 1 : i32
%flat = hal.dispatch.extern "gemv_bf16_nt_splitk_pair"(%x, %rhs0, %rhs1, %flat_c0, %flat_c1, %flat_c2, %flat_c3, %flat_c4) : (!x_op, tensor<16384x2048xbf16>, tensor<16384x2048xbf16>, i32, i32, i32, i32, i32) -> !flat
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 512 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 5, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_pair_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %member0 = "stablehlo.slice"(%flat) {start_indices = array<i64: 0>, limit_indices = array<i64: 32768>, strides = array<i64: 1>} : (!flat) -> tensor<32768xf32>
  %p0 = stablehlo.reshape %member0 : (tensor<32768xf32>) -> tensor<1x2x16384xf32>
  %member1 = "stablehlo.slice"(%flat) {start_indices = array<i64: 32768>, limit_indices = array<i64: 65536>, strides = array<i64: 1>} : (!flat) -> tensor<32768xf32>
  %p1 = stablehlo.reshape %member1 : (tensor<32768xf32>) -> tensor<1x2x16384xf32>
  return %p0, %p1 : tensor<1x2x16384xf32>, tensor<1x2x16384xf32>
}
