!x = tensor<1x50x64x8xf32>
!stat = tensor<1x50xf32>
!w = tensor<8xbf16>
func.func private @cumulative_group_norm_B1_T50_F64_C8(%x: !x, %w: !w) -> (!x, !stat, !stat, !stat, !stat, !stat, !stat, !stat, !stat) {
  %sum_at_time_cf = stablehlo.reshape %x : (!x) -> tensor<3200x8xf32>
  %sum_at_time_c = func.call @lane_xor_sum_R3200_W8_X4(%sum_at_time_cf) : (tensor<3200x8xf32>) -> (tensor<3200xf32>)
  %sum_at_time_ff = stablehlo.reshape %sum_at_time_c : (tensor<3200xf32>) -> tensor<50x64xf32>
  %sum_at_time_f = func.call @lane_xor_sum_R50_W64_X4(%sum_at_time_ff) : (tensor<50x64xf32>) -> (tensor<50xf32>)
  %sum_at_time = stablehlo.reshape %sum_at_time_f : (tensor<50xf32>) -> !stat
  %cumulative_sum = func.call @prefix_scan_R1_W50(%sum_at_time) : (tensor<1x50xf32>) -> (tensor<1x50xf32>)
  %step = stablehlo.iota dim = 1 : !stat
  %one_s = stablehlo.constant dense<0x3F800000> : tensor<f32>
  %one = stablehlo.broadcast_in_dim %one_s, dims = [] : (tensor<f32>) -> tensor<1x50xf32>
  %per_frame_s = stablehlo.constant dense<0x44000000> : tensor<f32>
  %per_frame = stablehlo.broadcast_in_dim %per_frame_s, dims = [] : (tensor<f32>) -> tensor<1x50xf32>
  %frames = stablehlo.add %step, %one : !stat
  %count = stablehlo.multiply %frames, %per_frame : !stat
  %mean = stablehlo.divide %cumulative_sum, %count : !stat
  %mean_b = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (!stat) -> !x
  %centered = stablehlo.subtract %x, %mean_b : !x
  %squared_raw = stablehlo.multiply %centered, %centered : !x
  %squared = stablehlo.optimization_barrier %squared_raw : !x
  %squared_at_time_cf = stablehlo.reshape %squared : (!x) -> tensor<3200x8xf32>
  %squared_at_time_c = func.call @lane_xor_sum_R3200_W8_X4(%squared_at_time_cf) : (tensor<3200x8xf32>) -> (tensor<3200xf32>)
  %squared_at_time_ff = stablehlo.reshape %squared_at_time_c : (tensor<3200xf32>) -> tensor<50x64xf32>
  %squared_at_time_f = func.call @lane_xor_sum_R50_W64_X4(%squared_at_time_ff) : (tensor<50x64xf32>) -> (tensor<50xf32>)
  %squared_at_time = stablehlo.reshape %squared_at_time_f : (tensor<50xf32>) -> !stat
  %cumulative_squared = func.call @prefix_scan_R1_W50(%squared_at_time) : (tensor<1x50xf32>) -> (tensor<1x50xf32>)
  %variance = stablehlo.divide %cumulative_squared, %count : !stat
  %eps_s = stablehlo.constant dense<0x3A83126F> : tensor<f32>
  %eps = stablehlo.broadcast_in_dim %eps_s, dims = [] : (tensor<f32>) -> tensor<1x50xf32>
  %stabilized_variance = stablehlo.add %variance, %eps : !stat
  %stab64 = stablehlo.convert %stabilized_variance : (!stat) -> tensor<1x50xf64>
  %root64 = stablehlo.sqrt %stab64 : tensor<1x50xf64>
  %root = stablehlo.convert %root64 : (tensor<1x50xf64>) -> !stat
  %inverse_stddev = stablehlo.divide %one, %root : !stat
  %inv_b = stablehlo.broadcast_in_dim %inverse_stddev, dims = [0, 1] : (!stat) -> !x
  %normed = stablehlo.multiply %centered, %inv_b : !x
  %w32 = stablehlo.convert %w : (!w) -> tensor<8xf32>
  %w_b = stablehlo.broadcast_in_dim %w32, dims = [3] : (tensor<8xf32>) -> !x
  %scaled = stablehlo.multiply %normed, %w_b : !x
  %norm = stablehlo.reduce_precision %scaled, format = e8m7 : !x
  return %norm, %sum_at_time, %cumulative_sum, %mean, %squared_at_time, %cumulative_squared, %variance, %stabilized_variance, %inverse_stddev : !x, !stat, !stat, !stat, !stat, !stat, !stat, !stat, !stat
}
