!x = tensor<2x130xf32>
!flat = tensor<2x256xf32>
!grid = tensor<2x64x4xf32>
!lane = tensor<2x64x1xf32>
!thread = tensor<2x64xf32>
!warp = tensor<2x2x32xf32>
!block = tensor<2x32xf32>
!wtot = tensor<2x2xf32>
func.func private @prefix_scan_R2_W130(%x: !x) -> !x {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %flat = stablehlo.pad %x, %zero, low = [0, 0], high = [0, 126], interior = [0, 0] : (!x, tensor<f32>) -> !flat
  %grid = stablehlo.reshape %flat : (!flat) -> !grid
  %v0_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 64, 1>, strides = array<i64: 1, 1, 1>} : (!grid) -> !lane
  %v0 = stablehlo.reshape %v0_3d : (!lane) -> !thread
  %v1_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 1>, limit_indices = array<i64: 2, 64, 2>, strides = array<i64: 1, 1, 1>} : (!grid) -> !lane
  %v1 = stablehlo.reshape %v1_3d : (!lane) -> !thread
  %v2_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 2>, limit_indices = array<i64: 2, 64, 3>, strides = array<i64: 1, 1, 1>} : (!grid) -> !lane
  %v2 = stablehlo.reshape %v2_3d : (!lane) -> !thread
  %v3_3d = "stablehlo.slice"(%grid) {start_indices = array<i64: 0, 0, 3>, limit_indices = array<i64: 2, 64, 4>, strides = array<i64: 1, 1, 1>} : (!grid) -> !lane
  %v3 = stablehlo.reshape %v3_3d : (!lane) -> !thread
  %l1 = stablehlo.add %v1, %v0 : !thread
  %l2 = stablehlo.add %v2, %l1 : !thread
  %l3 = stablehlo.add %v3, %l2 : !thread
  %c0 = stablehlo.reshape %v0 : (!thread) -> !lane
  %c1 = stablehlo.reshape %l1 : (!thread) -> !lane
  %c2 = stablehlo.reshape %l2 : (!thread) -> !lane
  %c3 = stablehlo.reshape %l3 : (!thread) -> !lane
  %c01 = stablehlo.concatenate %c0, %c1, dim = 2 : (!lane, !lane) -> tensor<2x64x2xf32>
  %c23 = stablehlo.concatenate %c2, %c3, dim = 2 : (!lane, !lane) -> tensor<2x64x2xf32>
  %local = stablehlo.concatenate %c01, %c23, dim = 2 : (tensor<2x64x2xf32>, tensor<2x64x2xf32>) -> !grid
  %totals = stablehlo.reshape %l3 : (!thread) -> !warp
  %t_keep1 = "stablehlo.slice"(%totals) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 31>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x31xf32>
  %t_up1 = stablehlo.pad %t_keep1, %zero, low = [0, 0, 1], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x31xf32>, tensor<f32>) -> !warp
  %t_incl1 = stablehlo.add %totals, %t_up1 : !warp
  %t_keep2 = "stablehlo.slice"(%t_incl1) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 30>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x30xf32>
  %t_up2 = stablehlo.pad %t_keep2, %zero, low = [0, 0, 2], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x30xf32>, tensor<f32>) -> !warp
  %t_incl2 = stablehlo.add %t_incl1, %t_up2 : !warp
  %t_keep4 = "stablehlo.slice"(%t_incl2) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 28>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x28xf32>
  %t_up4 = stablehlo.pad %t_keep4, %zero, low = [0, 0, 4], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x28xf32>, tensor<f32>) -> !warp
  %t_incl4 = stablehlo.add %t_incl2, %t_up4 : !warp
  %t_keep8 = "stablehlo.slice"(%t_incl4) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 24>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x24xf32>
  %t_up8 = stablehlo.pad %t_keep8, %zero, low = [0, 0, 8], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x24xf32>, tensor<f32>) -> !warp
  %t_incl8 = stablehlo.add %t_incl4, %t_up8 : !warp
  %t_keep16 = "stablehlo.slice"(%t_incl8) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 16>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x16xf32>
  %t_up16 = stablehlo.pad %t_keep16, %zero, low = [0, 0, 16], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x16xf32>, tensor<f32>) -> !warp
  %t_incl16 = stablehlo.add %t_incl8, %t_up16 : !warp
  %t_head = "stablehlo.slice"(%t_incl16) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 31>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x31xf32>
  %t_excl = stablehlo.pad %t_head, %zero, low = [0, 0, 1], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x31xf32>, tensor<f32>) -> !warp
  %excl_last = "stablehlo.slice"(%t_excl) {start_indices = array<i64: 0, 0, 31>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x1xf32>
  %total_last = "stablehlo.slice"(%totals) {start_indices = array<i64: 0, 0, 31>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (!warp) -> tensor<2x2x1xf32>
  %warp_total_3d = stablehlo.add %excl_last, %total_last : tensor<2x2x1xf32>
  %warp_total = stablehlo.reshape %warp_total_3d : (tensor<2x2x1xf32>) -> !wtot
  %warp_block = stablehlo.pad %warp_total, %zero, low = [0, 0], high = [0, 30], interior = [0, 0] : (!wtot, tensor<f32>) -> !block
  %w_keep1 = "stablehlo.slice"(%warp_block) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 31>, strides = array<i64: 1, 1>} : (!block) -> tensor<2x31xf32>
  %w_up1 = stablehlo.pad %w_keep1, %zero, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<2x31xf32>, tensor<f32>) -> !block
  %w_incl1 = stablehlo.add %warp_block, %w_up1 : !block
  %w_keep2 = "stablehlo.slice"(%w_incl1) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 30>, strides = array<i64: 1, 1>} : (!block) -> tensor<2x30xf32>
  %w_up2 = stablehlo.pad %w_keep2, %zero, low = [0, 2], high = [0, 0], interior = [0, 0] : (tensor<2x30xf32>, tensor<f32>) -> !block
  %w_incl2 = stablehlo.add %w_incl1, %w_up2 : !block
  %w_keep4 = "stablehlo.slice"(%w_incl2) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 28>, strides = array<i64: 1, 1>} : (!block) -> tensor<2x28xf32>
  %w_up4 = stablehlo.pad %w_keep4, %zero, low = [0, 4], high = [0, 0], interior = [0, 0] : (tensor<2x28xf32>, tensor<f32>) -> !block
  %w_incl4 = stablehlo.add %w_incl2, %w_up4 : !block
  %w_keep8 = "stablehlo.slice"(%w_incl4) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 24>, strides = array<i64: 1, 1>} : (!block) -> tensor<2x24xf32>
  %w_up8 = stablehlo.pad %w_keep8, %zero, low = [0, 8], high = [0, 0], interior = [0, 0] : (tensor<2x24xf32>, tensor<f32>) -> !block
  %w_incl8 = stablehlo.add %w_incl4, %w_up8 : !block
  %w_keep16 = "stablehlo.slice"(%w_incl8) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 16>, strides = array<i64: 1, 1>} : (!block) -> tensor<2x16xf32>
  %w_up16 = stablehlo.pad %w_keep16, %zero, low = [0, 16], high = [0, 0], interior = [0, 0] : (tensor<2x16xf32>, tensor<f32>) -> !block
  %w_incl16 = stablehlo.add %w_incl8, %w_up16 : !block
  %w_head = "stablehlo.slice"(%w_incl16) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 31>, strides = array<i64: 1, 1>} : (!block) -> tensor<2x31xf32>
  %w_excl = stablehlo.pad %w_head, %zero, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<2x31xf32>, tensor<f32>) -> !block
  %warp_prefix = "stablehlo.slice"(%w_excl) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (!block) -> !wtot
  %zero_grid = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> !grid
  %warp_prefix_grid = stablehlo.broadcast_in_dim %warp_prefix, dims = [0, 1] : (!wtot) -> tensor<2x2x32x4xf32>
  %warp_prefix_b = stablehlo.reshape %warp_prefix_grid : (tensor<2x2x32x4xf32>) -> !grid
  %thread_prefix_w = stablehlo.broadcast_in_dim %t_excl, dims = [0, 1, 2] : (!warp) -> tensor<2x2x32x4xf32>
  %thread_prefix_b = stablehlo.reshape %thread_prefix_w : (tensor<2x2x32x4xf32>) -> !grid
  %out0 = stablehlo.add %local, %zero_grid : !grid
  %out1 = stablehlo.add %out0, %warp_prefix_b : !grid
  %out2 = stablehlo.add %out1, %thread_prefix_b : !grid
  %out_flat = stablehlo.reshape %out2 : (!grid) -> !flat
  %out = "stablehlo.slice"(%out_flat) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 130>, strides = array<i64: 1, 1>} : (!flat) -> !x
  return %out : !x
}
