!x = tensor<4x128xf32>
!threads = tensor<4x128xf32>
!grid = tensor<4x32x4xf32>
!read = tensor<4x32x1xf32>
!acc = tensor<4x32xf32>
!out = tensor<4xf32>
func.func private @lane_xor_sum_R4_W128_X4(%x: !x) -> !out {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %padded = stablehlo.reshape %x : (!x) -> !threads
  %grid = stablehlo.reshape %padded : (!threads) -> !grid
  %acc_init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> !acc
  %read0_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 32, 1>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read0 = stablehlo.reshape %read0_3d : (!read) -> !acc
  %acc0 = stablehlo.add %acc_init, %read0 : !acc
  %read1_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 4, 32, 2>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read1 = stablehlo.reshape %read1_3d : (!read) -> !acc
  %acc1 = stablehlo.add %acc0, %read1 : !acc
  %read2_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 2>, limit_indices = array<i64: 4, 32, 3>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read2 = stablehlo.reshape %read2_3d : (!read) -> !acc
  %acc2 = stablehlo.add %acc1, %read2 : !acc
  %read3_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 3>, limit_indices = array<i64: 4, 32, 4>, strides = array<i64: 1, 1, 1>} : (!grid) -> !read
  %read3 = stablehlo.reshape %read3_3d : (!read) -> !acc
  %acc3 = stablehlo.add %acc2, %read3 : !acc
  %lanes = stablehlo.reshape %acc3 : (!acc) -> tensor<4x32xf32>
  %warp_lo16 = "stablehlo.slice"(%lanes) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 16>, strides = array<i64: 1, 1>} : (tensor<4x32xf32>) -> tensor<4x16xf32>
  %warp_hi16 = "stablehlo.slice"(%lanes) {start_indices = array<i64: 0, 16>, limit_indices = array<i64: 4, 32>, strides = array<i64: 1, 1>} : (tensor<4x32xf32>) -> tensor<4x16xf32>
  %warp_m16 = stablehlo.add %warp_lo16, %warp_hi16 : tensor<4x16xf32>
  %warp_lo8 = "stablehlo.slice"(%warp_m16) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %warp_hi8 = "stablehlo.slice"(%warp_m16) {start_indices = array<i64: 0, 8>, limit_indices = array<i64: 4, 16>, strides = array<i64: 1, 1>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %warp_m8 = stablehlo.add %warp_lo8, %warp_hi8 : tensor<4x8xf32>
  %warp_lo4 = "stablehlo.slice"(%warp_m8) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 4>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %warp_hi4 = "stablehlo.slice"(%warp_m8) {start_indices = array<i64: 0, 4>, limit_indices = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  %warp_m4 = stablehlo.add %warp_lo4, %warp_hi4 : tensor<4x4xf32>
  %warp_lo2 = "stablehlo.slice"(%warp_m4) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 2>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x2xf32>
  %warp_hi2 = "stablehlo.slice"(%warp_m4) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 4, 4>, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x2xf32>
  %warp_m2 = stablehlo.add %warp_lo2, %warp_hi2 : tensor<4x2xf32>
  %warp_lo1 = "stablehlo.slice"(%warp_m2) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 1>, strides = array<i64: 1, 1>} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %warp_hi1 = "stablehlo.slice"(%warp_m2) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 4, 2>, strides = array<i64: 1, 1>} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %warp_m1 = stablehlo.add %warp_lo1, %warp_hi1 : tensor<4x1xf32>
  %sum = stablehlo.reshape %warp_m1 : (tensor<4x1xf32>) -> !out
  return %sum : !out
}
