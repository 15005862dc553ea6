!x = tensor<2x2048xbf16>
!x_op = tensor<2x2048xbf16>
!flat = tensor<100352xf32>
func.func private @decode_linears_T2_K2048_N64x2048x512x512_P16_Xbf16(%x: !x, %w0: tensor<64x2048xbf16>, %w1: tensor<2048x2048xbf16>, %w2: tensor<512x2048xbf16>, %w3: tensor<512x2048xbf16>) -> (tensor<16x2x64xf32>, tensor<16x2x2048xf32>, tensor<16x2x512xf32>, tensor<16x2x512xf32>) {
  %rhs0 = stablehlo.convert %w0 : (tensor<64x2048xbf16>) -> tensor<64x2048xbf16>
  %rhs1 = stablehlo.convert %w1 : (tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16>
  %rhs2 = stablehlo.convert %w2 : (tensor<512x2048xbf16>) -> tensor<512x2048xbf16>
  %rhs3 = stablehlo.convert %w3 : (tensor<512x2048xbf16>) -> tensor<512x2048xbf16>
  %flat_c0 = arith.constant 2 : i32
%flat_c1 = arith.constant 64 : i32
%flat_c2 = arith.constant 2048 : i32
%flat_c3 = arith.constant 512 : i32
%flat_c4 = arith.constant 512 : i32
%flat_c5 = arith.constant 2048 : i32
%flat_c6 = arith.constant 16 : i32
%flat = hal.dispatch.extern "gemv_bf16_nt_splitk_quad"(%x, %rhs0, %rhs1, %rhs2, %rhs3, %flat_c0, %flat_c1, %flat_c2, %flat_c3, %flat_c4, %flat_c5, %flat_c6) : (!x_op, tensor<64x2048xbf16>, tensor<2048x2048xbf16>, tensor<512x2048xbf16>, tensor<512x2048xbf16>, i32, i32, i32, i32, i32, i32, i32) -> !flat
    count(%device: !hal.device) -> (index, index, index) {
      %workgroups = arith.constant 784 : index
      %one = arith.constant 1 : index
      hal.return %workgroups, %one, %one : index, index, index
    }
    layout(#hal.pipeline.layout<constants = 7, bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>]>)
    objects({ #hal.executable.target<"cuda", "cuda-nvptx-fb"> ordinal(0) = [#hal.executable.object<{path = "<ptx>/gemv_bf16_nt_quad_m16_sm90.ptx"}>]})
    <workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 20480>
  %member0 = "stablehlo.slice"(%flat) {start_indices = array<i64: 0>, limit_indices = array<i64: 2048>, strides = array<i64: 1>} : (!flat) -> tensor<2048xf32>
  %p0 = stablehlo.reshape %member0 : (tensor<2048xf32>) -> tensor<16x2x64xf32>
  %member1 = "stablehlo.slice"(%flat) {start_indices = array<i64: 2048>, limit_indices = array<i64: 67584>, strides = array<i64: 1>} : (!flat) -> tensor<65536xf32>
  %p1 = stablehlo.reshape %member1 : (tensor<65536xf32>) -> tensor<16x2x2048xf32>
  %member2 = "stablehlo.slice"(%flat) {start_indices = array<i64: 67584>, limit_indices = array<i64: 83968>, strides = array<i64: 1>} : (!flat) -> tensor<16384xf32>
  %p2 = stablehlo.reshape %member2 : (tensor<16384xf32>) -> tensor<16x2x512xf32>
  %member3 = "stablehlo.slice"(%flat) {start_indices = array<i64: 83968>, limit_indices = array<i64: 100352>, strides = array<i64: 1>} : (!flat) -> tensor<16384xf32>
  %p3 = stablehlo.reshape %member3 : (tensor<16384xf32>) -> tensor<16x2x512xf32>
  return %p0, %p1, %p2, %p3 : tensor<16x2x64xf32>, tensor<16x2x2048xf32>, tensor<16x2x512xf32>, tensor<16x2x512xf32>
}
