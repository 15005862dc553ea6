!x = tensor<2x300xf32>
!c = tensor<2x64xf32>
!ci = tensor<2x64xi32>
!cm = tensor<2x64xi1>func.func private @token_sample_R2_V300_k64(%x: !x, %temperature: tensor<2xf32>, %top_k: tensor<2xi32>, %top_p: tensor<2xf32>, %seed: tensor<2xi32>, %counter: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) {
  %best:2 = func.call @token_select_R2_V300_k64_W4(%x) : (tensor<2x300xf32>) -> (tensor<2x64xi32>, tensor<2x64xf32>)
  %rank = stablehlo.iota dim = 1 : !ci
  %at_row = stablehlo.iota dim = 0 : tensor<2x64x1xi32>
  %at_id = stablehlo.reshape %best#0 : (!ci) -> tensor<2x64x1xi32>
  %at = stablehlo.concatenate %at_row, %at_id, dim = 2 : (tensor<2x64x1xi32>, tensor<2x64x1xi32>) -> tensor<2x64x2xi32>
  %v = "stablehlo.gather"(%x, %at) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>} : (!x, tensor<2x64x2xi32>) -> !c
  %temperature_b = stablehlo.broadcast_in_dim %temperature, dims = [0] : (tensor<2xf32>) -> !c
  %z_a64 = stablehlo.convert %v : (tensor<2x64xf32>) -> tensor<2x64xf64>
  %z_b64 = stablehlo.convert %temperature_b : (tensor<2x64xf32>) -> tensor<2x64xf64>
  %z_64 = stablehlo.divide %z_a64, %z_b64 : tensor<2x64xf64>
  %z = stablehlo.convert %z_64 : (tensor<2x64xf64>) -> tensor<2x64xf32>
  %z0_2d = "stablehlo.slice"(%z) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %z0 = stablehlo.reshape %z0_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %z0_b = stablehlo.broadcast_in_dim %z0, dims = [0] : (tensor<2xf32>) -> !c
  %shifted = stablehlo.subtract %z, %z0_b : !c
  %exp = stablehlo.exponential %shifted : !c
  %top_k_b = stablehlo.broadcast_in_dim %top_k, dims = [0] : (tensor<2xi32>) -> !ci
  %in_top_k = stablehlo.compare LT, %rank, %top_k_b, SIGNED : (!ci, !ci) -> !cm
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %zero_c = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> !c
  %e = stablehlo.select %in_top_k, %exp, %zero_c : !cm, !c
  %sum = func.call @prefix_scan_R2_W64(%e) : (tensor<2x64xf32>) -> (tensor<2x64xf32>)
  %total_2d = "stablehlo.slice"(%sum) {start_indices = array<i64: 0, 63>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %total = stablehlo.reshape %total_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %total_b = stablehlo.broadcast_in_dim %total, dims = [0] : (tensor<2xf32>) -> !c
  %p_a64 = stablehlo.convert %e : (tensor<2x64xf32>) -> tensor<2x64xf64>
  %p_b64 = stablehlo.convert %total_b : (tensor<2x64xf32>) -> tensor<2x64xf64>
  %p_64 = stablehlo.divide %p_a64, %p_b64 : tensor<2x64xf64>
  %p = stablehlo.convert %p_64 : (tensor<2x64xf64>) -> tensor<2x64xf32>
  %p_reversed = stablehlo.reverse %p, dims = [1] : !c
  %tail_reversed = func.call @prefix_scan_R2_W64(%p_reversed) : (tensor<2x64xf32>) -> (tensor<2x64xf32>)
  %tail = stablehlo.reverse %tail_reversed, dims = [1] : !c
  %one = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
  %floor = stablehlo.subtract %one, %top_p : tensor<2xf32>
  %floor_b = stablehlo.broadcast_in_dim %floor, dims = [0] : (tensor<2xf32>) -> !c
  %in_top_p = stablehlo.compare GT, %tail, %floor_b, FLOAT : (!c, !c) -> !cm
  %first_rank = stablehlo.constant dense<0> : !ci
  %is_first = stablehlo.compare EQ, %rank, %first_rank, SIGNED : (!ci, !ci) -> !cm
  %in_top_p_or_first = stablehlo.or %in_top_p, %is_first : !cm
  %kept = stablehlo.and %in_top_k, %in_top_p_or_first : !cm
  %w = stablehlo.select %kept, %e, %zero_c : !cm, !c
  %cum = func.call @prefix_scan_R2_W64(%w) : (tensor<2x64xf32>) -> (tensor<2x64xf32>)
  %counter_u = stablehlo.bitcast_convert %counter : (tensor<2xi32>) -> tensor<2xui32>
  %seed_u = stablehlo.bitcast_convert %seed : (tensor<2xi32>) -> tensor<2xui32>
  %golden = stablehlo.constant dense<2654435769> : tensor<2xui32>
  %counted = stablehlo.add %counter_u, %golden : tensor<2xui32>
  %inner_s16 = stablehlo.constant dense<16> : tensor<2xui32>
  %inner_s13 = stablehlo.constant dense<13> : tensor<2xui32>
  %inner_m1 = stablehlo.constant dense<2246822507> : tensor<2xui32>
  %inner_m2 = stablehlo.constant dense<3266489909> : tensor<2xui32>
  %inner_a = stablehlo.shift_right_logical %counted, %inner_s16 : tensor<2xui32>
  %inner_b = stablehlo.xor %counted, %inner_a : tensor<2xui32>
  %inner_c = stablehlo.multiply %inner_b, %inner_m1 : tensor<2xui32>
  %inner_d = stablehlo.shift_right_logical %inner_c, %inner_s13 : tensor<2xui32>
  %inner_e = stablehlo.xor %inner_c, %inner_d : tensor<2xui32>
  %inner_f = stablehlo.multiply %inner_e, %inner_m2 : tensor<2xui32>
  %inner_g = stablehlo.shift_right_logical %inner_f, %inner_s16 : tensor<2xui32>
  %inner = stablehlo.xor %inner_f, %inner_g : tensor<2xui32>
  %keyed = stablehlo.xor %seed_u, %inner : tensor<2xui32>
  %mixed_s16 = stablehlo.constant dense<16> : tensor<2xui32>
  %mixed_s13 = stablehlo.constant dense<13> : tensor<2xui32>
  %mixed_m1 = stablehlo.constant dense<2246822507> : tensor<2xui32>
  %mixed_m2 = stablehlo.constant dense<3266489909> : tensor<2xui32>
  %mixed_a = stablehlo.shift_right_logical %keyed, %mixed_s16 : tensor<2xui32>
  %mixed_b = stablehlo.xor %keyed, %mixed_a : tensor<2xui32>
  %mixed_c = stablehlo.multiply %mixed_b, %mixed_m1 : tensor<2xui32>
  %mixed_d = stablehlo.shift_right_logical %mixed_c, %mixed_s13 : tensor<2xui32>
  %mixed_e = stablehlo.xor %mixed_c, %mixed_d : tensor<2xui32>
  %mixed_f = stablehlo.multiply %mixed_e, %mixed_m2 : tensor<2xui32>
  %mixed_g = stablehlo.shift_right_logical %mixed_f, %mixed_s16 : tensor<2xui32>
  %mixed = stablehlo.xor %mixed_f, %mixed_g : tensor<2xui32>
  %s8 = stablehlo.constant dense<8> : tensor<2xui32>
  %bits24 = stablehlo.shift_right_logical %mixed, %s8 : tensor<2xui32>
  %bits24_f = stablehlo.convert %bits24 : (tensor<2xui32>) -> tensor<2xf32>
  %ulp = stablehlo.constant dense<0x33800000> : tensor<2xf32>
  %u = stablehlo.multiply %bits24_f, %ulp : tensor<2xf32>
  %kept_total_2d = "stablehlo.slice"(%cum) {start_indices = array<i64: 0, 63>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %kept_total = stablehlo.reshape %kept_total_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %threshold = stablehlo.multiply %u, %kept_total : tensor<2xf32>
  %threshold_b = stablehlo.broadcast_in_dim %threshold, dims = [0] : (tensor<2xf32>) -> !c
  %over = stablehlo.compare GT, %cum, %threshold_b, FLOAT : (!c, !c) -> !cm
  %past = stablehlo.and %kept, %over : !cm
  %first_past_bound = stablehlo.constant dense<64> : tensor<2x64xi32>
  %first_past_flipped_i = stablehlo.subtract %first_past_bound, %rank : tensor<2x64xi32>
  %first_past_flipped = stablehlo.convert %first_past_flipped_i : (tensor<2x64xi32>) -> tensor<2x64xf32>
  %first_past_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %first_past_zero_b = stablehlo.broadcast_in_dim %first_past_zero, dims = [] : (tensor<f32>) -> tensor<2x64xf32>
  %first_past_held = stablehlo.select %past, %first_past_flipped, %first_past_zero_b : tensor<2x64xi1>, tensor<2x64xf32>
  %first_past_top = stablehlo.reduce(%first_past_held init: %first_past_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
  %first_past_top_i = stablehlo.convert %first_past_top : (tensor<2xf32>) -> tensor<2xi32>
  %first_past_bound_row = stablehlo.constant dense<64> : tensor<2xi32>
  %first_past_found = stablehlo.subtract %first_past_bound_row, %first_past_top_i : tensor<2xi32>
  %first_past_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %first_past_missing = stablehlo.constant dense<64> : tensor<2xi32>
  %first_past_any = stablehlo.compare GT, %first_past_top_i, %first_past_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %first_past = stablehlo.select %first_past_any, %first_past_found, %first_past_missing : tensor<2xi1>, tensor<2xi32>
  %last_rank = stablehlo.constant dense<63> : !ci
  %reversed = stablehlo.subtract %last_rank, %rank : !ci
  %last_kept_reversed_bound = stablehlo.constant dense<64> : tensor<2x64xi32>
  %last_kept_reversed_flipped_i = stablehlo.subtract %last_kept_reversed_bound, %reversed : tensor<2x64xi32>
  %last_kept_reversed_flipped = stablehlo.convert %last_kept_reversed_flipped_i : (tensor<2x64xi32>) -> tensor<2x64xf32>
  %last_kept_reversed_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %last_kept_reversed_zero_b = stablehlo.broadcast_in_dim %last_kept_reversed_zero, dims = [] : (tensor<f32>) -> tensor<2x64xf32>
  %last_kept_reversed_held = stablehlo.select %kept, %last_kept_reversed_flipped, %last_kept_reversed_zero_b : tensor<2x64xi1>, tensor<2x64xf32>
  %last_kept_reversed_top = stablehlo.reduce(%last_kept_reversed_held init: %last_kept_reversed_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
  %last_kept_reversed_top_i = stablehlo.convert %last_kept_reversed_top : (tensor<2xf32>) -> tensor<2xi32>
  %last_kept_reversed_bound_row = stablehlo.constant dense<64> : tensor<2xi32>
  %last_kept_reversed_found = stablehlo.subtract %last_kept_reversed_bound_row, %last_kept_reversed_top_i : tensor<2xi32>
  %last_kept_reversed_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %last_kept_reversed_missing = stablehlo.constant dense<64> : tensor<2xi32>
  %last_kept_reversed_any = stablehlo.compare GT, %last_kept_reversed_top_i, %last_kept_reversed_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %last_kept_reversed = stablehlo.select %last_kept_reversed_any, %last_kept_reversed_found, %last_kept_reversed_missing : tensor<2xi1>, tensor<2xi32>
  %last_rank_row = stablehlo.constant dense<63> : tensor<2xi32>
  %last_kept = stablehlo.subtract %last_rank_row, %last_kept_reversed : tensor<2xi32>
  %none = stablehlo.constant dense<64> : tensor<2xi32>
  %found = stablehlo.compare LT, %first_past, %none, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %chosen = stablehlo.select %found, %first_past, %last_kept : tensor<2xi1>, tensor<2xi32>
  %chosen_b = stablehlo.broadcast_in_dim %chosen, dims = [0] : (tensor<2xi32>) -> !ci
  %is_chosen = stablehlo.compare EQ, %rank, %chosen_b, SIGNED : (!ci, !ci) -> !cm
  %id_f = stablehlo.convert %best#0 : (!ci) -> !c
  %chosen_id = stablehlo.select %is_chosen, %id_f, %zero_c : !cm, !c
  %token_f = stablehlo.reduce(%chosen_id init: %zero) applies stablehlo.maximum across dimensions = [1] : (!c, tensor<f32>) -> tensor<2xf32>
  %token = stablehlo.convert %token_f : (tensor<2xf32>) -> tensor<2xi32>
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %lowest_c = stablehlo.broadcast_in_dim %lowest, dims = [] : (tensor<f32>) -> !c
  %chosen_v = stablehlo.select %is_chosen, %v, %lowest_c : !cm, !c
  %logit = stablehlo.reduce(%chosen_v init: %lowest) applies stablehlo.maximum across dimensions = [1] : (!c, tensor<f32>) -> tensor<2xf32>
  %top_logit_2d = "stablehlo.slice"(%v) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %top_logit = stablehlo.reshape %top_logit_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  return %token, %logit, %top_logit : tensor<2xi32>, tensor<2xf32>, tensor<2xf32>
}
