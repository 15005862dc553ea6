!x = tensor<2x1536xf32>
!threads = tensor<2x2048xf32>
!grid = tensor<2x256x8xf32>
!read = tensor<2x256x1xf32>
!acc = tensor<2x256xf32>
!out = tensor<2xf32>
func.func private @lane_xor_sum_R2_W1536_X8_sq(%x: !x) -> !out {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %squares = stablehlo.multiply %x, %x : !x
  %padded = stablehlo.pad %squares, %zero, low = [0, 0], high = [0, 512], interior = [0, 0] : (!x, tensor<f32>) -> !threads
  %grid = stablehlo.reshape %padded : (!threads) -> !grid
  %acc_init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> !acc
  %read0_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 256, 1>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read0 = stablehlo.reshape %read0_3d : (!read) -> !acc
  %acc0 = stablehlo.add %acc_init, %read0 : !acc
  %read1_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 2, 256, 2>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read1 = stablehlo.reshape %read1_3d : (!read) -> !acc
  %acc1 = stablehlo.add %acc0, %read1 : !acc
  %read2_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 2>, limit_indices = array<i64: 2, 256, 3>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read2 = stablehlo.reshape %read2_3d : (!read) -> !acc
  %acc2 = stablehlo.add %acc1, %read2 : !acc
  %read3_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 3>, limit_indices = array<i64: 2, 256, 4>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read3 = stablehlo.reshape %read3_3d : (!read) -> !acc
  %acc3 = stablehlo.add %acc2, %read3 : !acc
  %read4_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 4>, limit_indices = array<i64: 2, 256, 5>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read4 = stablehlo.reshape %read4_3d : (!read) -> !acc
  %acc4 = stablehlo.add %acc3, %read4 : !acc
  %read5_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 5>, limit_indices = array<i64: 2, 256, 6>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read5 = stablehlo.reshape %read5_3d : (!read) -> !acc
  %acc5 = stablehlo.add %acc4, %read5 : !acc
  %read6_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 6>, limit_indices = array<i64: 2, 256, 7>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read6 = stablehlo.reshape %read6_3d : (!read) -> !acc
  %acc6 = stablehlo.add %acc5, %read6 : !acc
  %read7_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 7>, limit_indices = array<i64: 2, 256, 8>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read7 = stablehlo.reshape %read7_3d : (!read) -> !acc
  %acc7 = stablehlo.add %acc6, %read7 : !acc
  %lanes = stablehlo.reshape %acc7 : (!acc) -> tensor<2x8x32xf32>
  %warp_lo16 = "stablehlo.slice"(%lanes) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 8, 16>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x32xf32>) -> tensor<2x8x16xf32>
  %warp_hi16 = "stablehlo.slice"(%lanes) {start_indices = array<i64: 0, 0, 16>, limit_indices = array<i64: 2, 8, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x32xf32>) -> tensor<2x8x16xf32>
  %warp_m16 = stablehlo.add %warp_lo16, %warp_hi16 : tensor<2x8x16xf32>
  %warp_lo8 = "stablehlo.slice"(%warp_m16) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 8, 8>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x16xf32>) -> tensor<2x8x8xf32>
  %warp_hi8 = "stablehlo.slice"(%warp_m16) {start_indices = array<i64: 0, 0, 8>, limit_indices = array<i64: 2, 8, 16>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x16xf32>) -> tensor<2x8x8xf32>
  %warp_m8 = stablehlo.add %warp_lo8, %warp_hi8 : tensor<2x8x8xf32>
  %warp_lo4 = "stablehlo.slice"(%warp_m8) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 8, 4>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x8xf32>) -> tensor<2x8x4xf32>
  %warp_hi4 = "stablehlo.slice"(%warp_m8) {start_indices = array<i64: 0, 0, 4>, limit_indices = array<i64: 2, 8, 8>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x8xf32>) -> tensor<2x8x4xf32>
  %warp_m4 = stablehlo.add %warp_lo4, %warp_hi4 : tensor<2x8x4xf32>
  %warp_lo2 = "stablehlo.slice"(%warp_m4) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 8, 2>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x4xf32>) -> tensor<2x8x2xf32>
  %warp_hi2 = "stablehlo.slice"(%warp_m4) {start_indices = array<i64: 0, 0, 2>, limit_indices = array<i64: 2, 8, 4>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x4xf32>) -> tensor<2x8x2xf32>
  %warp_m2 = stablehlo.add %warp_lo2, %warp_hi2 : tensor<2x8x2xf32>
  %warp_lo1 = "stablehlo.slice"(%warp_m2) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 8, 1>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x2xf32>) -> tensor<2x8x1xf32>
  %warp_hi1 = "stablehlo.slice"(%warp_m2) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 2, 8, 2>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x2xf32>) -> tensor<2x8x1xf32>
  %warp_m1 = stablehlo.add %warp_lo1, %warp_hi1 : tensor<2x8x1xf32>
  %warp_totals = stablehlo.reshape %warp_m1 : (tensor<2x8x1xf32>) -> tensor<2x8xf32>
  %block = stablehlo.pad %warp_totals, %zero, low = [0, 0], high = [0, 24], interior = [0, 0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x32xf32>
  %block_lo16 = "stablehlo.slice"(%block) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 16>, strides = array<i64: 1, 1>} : (tensor<2x32xf32>) -> tensor<2x16xf32>
  %block_hi16 = "stablehlo.slice"(%block) {start_indices = array<i64: 0, 16>, limit_indices = array<i64: 2, 32>, strides = array<i64: 1, 1>} : (tensor<2x32xf32>) -> tensor<2x16xf32>
  %block_m16 = stablehlo.add %block_lo16, %block_hi16 : tensor<2x16xf32>
  %block_lo8 = "stablehlo.slice"(%block_m16) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 8>, strides = array<i64: 1, 1>} : (tensor<2x16xf32>) -> tensor<2x8xf32>
  %block_hi8 = "stablehlo.slice"(%block_m16) {start_indices = array<i64: 0, 8>, limit_indices = array<i64: 2, 16>, strides = array<i64: 1, 1>} : (tensor<2x16xf32>) -> tensor<2x8xf32>
  %block_m8 = stablehlo.add %block_lo8, %block_hi8 : tensor<2x8xf32>
  %block_lo4 = "stablehlo.slice"(%block_m8) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %block_hi4 = "stablehlo.slice"(%block_m8) {start_indices = array<i64: 0, 4>, limit_indices = array<i64: 2, 8>, strides = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  %block_m4 = stablehlo.add %block_lo4, %block_hi4 : tensor<2x4xf32>
  %block_lo2 = "stablehlo.slice"(%block_m4) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %block_hi2 = "stablehlo.slice"(%block_m4) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %block_m2 = stablehlo.add %block_lo2, %block_hi2 : tensor<2x2xf32>
  %block_lo1 = "stablehlo.slice"(%block_m2) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %block_hi1 = "stablehlo.slice"(%block_m2) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %block_m1 = stablehlo.add %block_lo1, %block_hi1 : tensor<2x1xf32>
  %sum = stablehlo.reshape %block_m1 : (tensor<2x1xf32>) -> !out
  return %sum : !out
}
