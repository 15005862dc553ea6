!x = tensor<2x300xf32>
!top = tensor<2x3xf32>
!top_i = tensor<2x3xi32>
!row = tensor<2xf32>
!row_i = tensor<2xi32>
func.func private @token_select_R2_V300_k3_W64(%x: !x) -> (!top_i, !top) {
  %greedy:4 = func.call @token_select_R2_V300(%x) : (tensor<2x300xf32>) -> (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>, tensor<2xi32>)
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %padded = stablehlo.pad %x, %lowest, low = [0, 0], high = [0, 20], interior = [0, 0] : (!x, tensor<f32>) -> tensor<2x320xf32>
  %grid = stablehlo.reshape %padded : (tensor<2x320xf32>) -> tensor<2x5x64xf32>
  %maxima = stablehlo.reduce(%grid init: %lowest) applies stablehlo.maximum across dimensions = [2] : (tensor<2x5x64xf32>, tensor<f32>) -> tensor<2x5xf32>
  %chunk_index = stablehlo.iota dim = 1 : tensor<2x5xi32>
  %chunks_lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %chunks_lowest_b = stablehlo.broadcast_in_dim %chunks_lowest, dims = [] : (tensor<f32>) -> tensor<2x5xf32>
  %chunks_v0 = stablehlo.reduce(%maxima init: %chunks_lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf32>, tensor<f32>) -> !row
  %chunks_v0_b = stablehlo.broadcast_in_dim %chunks_v0, dims = [0] : (!row) -> tensor<2x5xf32>
  %chunks_hit0 = stablehlo.compare EQ, %maxima, %chunks_v0_b, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_i0_bound = stablehlo.constant dense<5> : tensor<2x5xi32>
  %chunks_i0_flipped_i = stablehlo.subtract %chunks_i0_bound, %chunk_index : tensor<2x5xi32>
  %chunks_i0_flipped = stablehlo.convert %chunks_i0_flipped_i : (tensor<2x5xi32>) -> tensor<2x5xf32>
  %chunks_i0_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %chunks_i0_zero_b = stablehlo.broadcast_in_dim %chunks_i0_zero, dims = [] : (tensor<f32>) -> tensor<2x5xf32>
  %chunks_i0_held = stablehlo.select %chunks_hit0, %chunks_i0_flipped, %chunks_i0_zero_b : tensor<2x5xi1>, tensor<2x5xf32>
  %chunks_i0_top = stablehlo.reduce(%chunks_i0_held init: %chunks_i0_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
  %chunks_i0_top_i = stablehlo.convert %chunks_i0_top : (tensor<2xf32>) -> tensor<2xi32>
  %chunks_i0_bound_row = stablehlo.constant dense<5> : tensor<2xi32>
  %chunks_i0_found = stablehlo.subtract %chunks_i0_bound_row, %chunks_i0_top_i : tensor<2xi32>
  %chunks_i0_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %chunks_i0_missing = stablehlo.constant dense<2147483647> : tensor<2xi32>
  %chunks_i0_any = stablehlo.compare GT, %chunks_i0_top_i, %chunks_i0_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %chunks_i0 = stablehlo.select %chunks_i0_any, %chunks_i0_found, %chunks_i0_missing : tensor<2xi1>, tensor<2xi32>
  %chunks_v0_entry = stablehlo.reshape %chunks_v0 : (!row) -> tensor<1x2xf32>
  %chunks_i0_entry = stablehlo.reshape %chunks_i0 : (!row_i) -> tensor<1x2xi32>
  %chunks_after1_v = stablehlo.broadcast_in_dim %chunks_v0, dims = [0] : (!row) -> tensor<2x5xf32>
  %chunks_after1_i = stablehlo.broadcast_in_dim %chunks_i0, dims = [0] : (!row_i) -> tensor<2x5xi32>
  %chunks_below1 = stablehlo.compare LT, %maxima, %chunks_after1_v, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_equal1 = stablehlo.compare EQ, %maxima, %chunks_after1_v, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_later1 = stablehlo.compare GT, %chunk_index, %chunks_after1_i, SIGNED : (tensor<2x5xi32>, tensor<2x5xi32>) -> tensor<2x5xi1>
  %chunks_tied1 = stablehlo.and %chunks_equal1, %chunks_later1 : tensor<2x5xi1>
  %chunks_eligible1 = stablehlo.or %chunks_below1, %chunks_tied1 : tensor<2x5xi1>
  %chunks_masked1 = stablehlo.select %chunks_eligible1, %maxima, %chunks_lowest_b : tensor<2x5xi1>, tensor<2x5xf32>
  %chunks_v1 = stablehlo.reduce(%chunks_masked1 init: %chunks_lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf32>, tensor<f32>) -> !row
  %chunks_v1_b = stablehlo.broadcast_in_dim %chunks_v1, dims = [0] : (!row) -> tensor<2x5xf32>
  %chunks_best1 = stablehlo.compare EQ, %maxima, %chunks_v1_b, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_hit1 = stablehlo.and %chunks_eligible1, %chunks_best1 : tensor<2x5xi1>
  %chunks_i1_bound = stablehlo.constant dense<5> : tensor<2x5xi32>
  %chunks_i1_flipped_i = stablehlo.subtract %chunks_i1_bound, %chunk_index : tensor<2x5xi32>
  %chunks_i1_flipped = stablehlo.convert %chunks_i1_flipped_i : (tensor<2x5xi32>) -> tensor<2x5xf32>
  %chunks_i1_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %chunks_i1_zero_b = stablehlo.broadcast_in_dim %chunks_i1_zero, dims = [] : (tensor<f32>) -> tensor<2x5xf32>
  %chunks_i1_held = stablehlo.select %chunks_hit1, %chunks_i1_flipped, %chunks_i1_zero_b : tensor<2x5xi1>, tensor<2x5xf32>
  %chunks_i1_top = stablehlo.reduce(%chunks_i1_held init: %chunks_i1_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
  %chunks_i1_top_i = stablehlo.convert %chunks_i1_top : (tensor<2xf32>) -> tensor<2xi32>
  %chunks_i1_bound_row = stablehlo.constant dense<5> : tensor<2xi32>
  %chunks_i1_found = stablehlo.subtract %chunks_i1_bound_row, %chunks_i1_top_i : tensor<2xi32>
  %chunks_i1_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %chunks_i1_missing = stablehlo.constant dense<2147483647> : tensor<2xi32>
  %chunks_i1_any = stablehlo.compare GT, %chunks_i1_top_i, %chunks_i1_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %chunks_i1 = stablehlo.select %chunks_i1_any, %chunks_i1_found, %chunks_i1_missing : tensor<2xi1>, tensor<2xi32>
  %chunks_v1_entry = stablehlo.reshape %chunks_v1 : (!row) -> tensor<1x2xf32>
  %chunks_i1_entry = stablehlo.reshape %chunks_i1 : (!row_i) -> tensor<1x2xi32>
  %chunks_after2_v = stablehlo.broadcast_in_dim %chunks_v1, dims = [0] : (!row) -> tensor<2x5xf32>
  %chunks_after2_i = stablehlo.broadcast_in_dim %chunks_i1, dims = [0] : (!row_i) -> tensor<2x5xi32>
  %chunks_below2 = stablehlo.compare LT, %maxima, %chunks_after2_v, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_equal2 = stablehlo.compare EQ, %maxima, %chunks_after2_v, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_later2 = stablehlo.compare GT, %chunk_index, %chunks_after2_i, SIGNED : (tensor<2x5xi32>, tensor<2x5xi32>) -> tensor<2x5xi1>
  %chunks_tied2 = stablehlo.and %chunks_equal2, %chunks_later2 : tensor<2x5xi1>
  %chunks_eligible2 = stablehlo.or %chunks_below2, %chunks_tied2 : tensor<2x5xi1>
  %chunks_masked2 = stablehlo.select %chunks_eligible2, %maxima, %chunks_lowest_b : tensor<2x5xi1>, tensor<2x5xf32>
  %chunks_v2 = stablehlo.reduce(%chunks_masked2 init: %chunks_lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf32>, tensor<f32>) -> !row
  %chunks_v2_b = stablehlo.broadcast_in_dim %chunks_v2, dims = [0] : (!row) -> tensor<2x5xf32>
  %chunks_best2 = stablehlo.compare EQ, %maxima, %chunks_v2_b, FLOAT : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xi1>
  %chunks_hit2 = stablehlo.and %chunks_eligible2, %chunks_best2 : tensor<2x5xi1>
  %chunks_i2_bound = stablehlo.constant dense<5> : tensor<2x5xi32>
  %chunks_i2_flipped_i = stablehlo.subtract %chunks_i2_bound, %chunk_index : tensor<2x5xi32>
  %chunks_i2_flipped = stablehlo.convert %chunks_i2_flipped_i : (tensor<2x5xi32>) -> tensor<2x5xf32>
  %chunks_i2_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %chunks_i2_zero_b = stablehlo.broadcast_in_dim %chunks_i2_zero, dims = [] : (tensor<f32>) -> tensor<2x5xf32>
  %chunks_i2_held = stablehlo.select %chunks_hit2, %chunks_i2_flipped, %chunks_i2_zero_b : tensor<2x5xi1>, tensor<2x5xf32>
  %chunks_i2_top = stablehlo.reduce(%chunks_i2_held init: %chunks_i2_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
  %chunks_i2_top_i = stablehlo.convert %chunks_i2_top : (tensor<2xf32>) -> tensor<2xi32>
  %chunks_i2_bound_row = stablehlo.constant dense<5> : tensor<2xi32>
  %chunks_i2_found = stablehlo.subtract %chunks_i2_bound_row, %chunks_i2_top_i : tensor<2xi32>
  %chunks_i2_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %chunks_i2_missing = stablehlo.constant dense<2147483647> : tensor<2xi32>
  %chunks_i2_any = stablehlo.compare GT, %chunks_i2_top_i, %chunks_i2_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %chunks_i2 = stablehlo.select %chunks_i2_any, %chunks_i2_found, %chunks_i2_missing : tensor<2xi1>, tensor<2xi32>
  %chunks_v2_entry = stablehlo.reshape %chunks_v2 : (!row) -> tensor<1x2xf32>
  %chunks_i2_entry = stablehlo.reshape %chunks_i2 : (!row_i) -> tensor<1x2xi32>
  %chunks_values_t = stablehlo.concatenate %chunks_v0_entry, %chunks_v1_entry, %chunks_v2_entry, dim = 0 : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %chunks_index_t = stablehlo.concatenate %chunks_i0_entry, %chunks_i1_entry, %chunks_i2_entry, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<3x2xi32>
  %chunks_values = stablehlo.transpose %chunks_values_t, dims = [1, 0] : (tensor<3x2xf32>) -> !top
  %chunks_index = stablehlo.transpose %chunks_index_t, dims = [1, 0] : (tensor<3x2xi32>) -> !top_i
  %first_chunk = stablehlo.constant dense<0> : tensor<i32>
  %last_chunk = stablehlo.constant dense<4> : tensor<i32>
  %best_chunks = stablehlo.clamp %first_chunk, %chunks_index, %last_chunk : (tensor<i32>, !top_i, tensor<i32>) -> !top_i
  %row_index = stablehlo.iota dim = 0 : !top_i
  %chunks_per_row = stablehlo.constant dense<5> : !top_i
  %row_start = stablehlo.multiply %row_index, %chunks_per_row : !top_i
  %table_row = stablehlo.add %row_start, %best_chunks : !top_i
  %table_index = stablehlo.reshape %table_row : (!top_i) -> tensor<6x1xi32>
  %table = stablehlo.reshape %grid : (tensor<2x5x64xf32>) -> tensor<10x64xf32>
  %gathered = "stablehlo.gather"(%table, %table_index) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>} : (tensor<10x64xf32>, tensor<6x1xi32>) -> tensor<6x64xf32>
  %candidates = stablehlo.reshape %gathered : (tensor<6x64xf32>) -> tensor<2x192xf32>
  %chunk_width = stablehlo.constant dense<64> : !top_i
  %chunk_start = stablehlo.multiply %best_chunks, %chunk_width : !top_i
  %chunk_start_b = stablehlo.broadcast_in_dim %chunk_start, dims = [0, 1] : (!top_i) -> tensor<2x3x64xi32>
  %in_chunk = stablehlo.iota dim = 2 : tensor<2x3x64xi32>
  %candidate_columns_3d = stablehlo.add %chunk_start_b, %in_chunk : tensor<2x3x64xi32>
  %candidate_columns = stablehlo.reshape %candidate_columns_3d : (tensor<2x3x64xi32>) -> tensor<2x192xi32>
  %best_lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %best_lowest_b = stablehlo.broadcast_in_dim %best_lowest, dims = [] : (tensor<f32>) -> tensor<2x192xf32>
  %best_v0 = stablehlo.reduce(%candidates init: %best_lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x192xf32>, tensor<f32>) -> !row
  %best_v0_b = stablehlo.broadcast_in_dim %best_v0, dims = [0] : (!row) -> tensor<2x192xf32>
  %best_hit0 = stablehlo.compare EQ, %candidates, %best_v0_b, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_i0_bound = stablehlo.constant dense<320> : tensor<2x192xi32>
  %best_i0_flipped_i = stablehlo.subtract %best_i0_bound, %candidate_columns : tensor<2x192xi32>
  %best_i0_flipped = stablehlo.convert %best_i0_flipped_i : (tensor<2x192xi32>) -> tensor<2x192xf32>
  %best_i0_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %best_i0_zero_b = stablehlo.broadcast_in_dim %best_i0_zero, dims = [] : (tensor<f32>) -> tensor<2x192xf32>
  %best_i0_held = stablehlo.select %best_hit0, %best_i0_flipped, %best_i0_zero_b : tensor<2x192xi1>, tensor<2x192xf32>
  %best_i0_top = stablehlo.reduce(%best_i0_held init: %best_i0_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x192xf32>, tensor<f32>) -> tensor<2xf32>
  %best_i0_top_i = stablehlo.convert %best_i0_top : (tensor<2xf32>) -> tensor<2xi32>
  %best_i0_bound_row = stablehlo.constant dense<320> : tensor<2xi32>
  %best_i0_found = stablehlo.subtract %best_i0_bound_row, %best_i0_top_i : tensor<2xi32>
  %best_i0_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %best_i0_missing = stablehlo.constant dense<2147483647> : tensor<2xi32>
  %best_i0_any = stablehlo.compare GT, %best_i0_top_i, %best_i0_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %best_i0 = stablehlo.select %best_i0_any, %best_i0_found, %best_i0_missing : tensor<2xi1>, tensor<2xi32>
  %best_v0_entry = stablehlo.reshape %best_v0 : (!row) -> tensor<1x2xf32>
  %best_i0_entry = stablehlo.reshape %best_i0 : (!row_i) -> tensor<1x2xi32>
  %best_after1_v = stablehlo.broadcast_in_dim %best_v0, dims = [0] : (!row) -> tensor<2x192xf32>
  %best_after1_i = stablehlo.broadcast_in_dim %best_i0, dims = [0] : (!row_i) -> tensor<2x192xi32>
  %best_below1 = stablehlo.compare LT, %candidates, %best_after1_v, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_equal1 = stablehlo.compare EQ, %candidates, %best_after1_v, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_later1 = stablehlo.compare GT, %candidate_columns, %best_after1_i, SIGNED : (tensor<2x192xi32>, tensor<2x192xi32>) -> tensor<2x192xi1>
  %best_tied1 = stablehlo.and %best_equal1, %best_later1 : tensor<2x192xi1>
  %best_eligible1 = stablehlo.or %best_below1, %best_tied1 : tensor<2x192xi1>
  %best_masked1 = stablehlo.select %best_eligible1, %candidates, %best_lowest_b : tensor<2x192xi1>, tensor<2x192xf32>
  %best_v1 = stablehlo.reduce(%best_masked1 init: %best_lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x192xf32>, tensor<f32>) -> !row
  %best_v1_b = stablehlo.broadcast_in_dim %best_v1, dims = [0] : (!row) -> tensor<2x192xf32>
  %best_best1 = stablehlo.compare EQ, %candidates, %best_v1_b, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_hit1 = stablehlo.and %best_eligible1, %best_best1 : tensor<2x192xi1>
  %best_i1_bound = stablehlo.constant dense<320> : tensor<2x192xi32>
  %best_i1_flipped_i = stablehlo.subtract %best_i1_bound, %candidate_columns : tensor<2x192xi32>
  %best_i1_flipped = stablehlo.convert %best_i1_flipped_i : (tensor<2x192xi32>) -> tensor<2x192xf32>
  %best_i1_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %best_i1_zero_b = stablehlo.broadcast_in_dim %best_i1_zero, dims = [] : (tensor<f32>) -> tensor<2x192xf32>
  %best_i1_held = stablehlo.select %best_hit1, %best_i1_flipped, %best_i1_zero_b : tensor<2x192xi1>, tensor<2x192xf32>
  %best_i1_top = stablehlo.reduce(%best_i1_held init: %best_i1_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x192xf32>, tensor<f32>) -> tensor<2xf32>
  %best_i1_top_i = stablehlo.convert %best_i1_top : (tensor<2xf32>) -> tensor<2xi32>
  %best_i1_bound_row = stablehlo.constant dense<320> : tensor<2xi32>
  %best_i1_found = stablehlo.subtract %best_i1_bound_row, %best_i1_top_i : tensor<2xi32>
  %best_i1_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %best_i1_missing = stablehlo.constant dense<2147483647> : tensor<2xi32>
  %best_i1_any = stablehlo.compare GT, %best_i1_top_i, %best_i1_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %best_i1 = stablehlo.select %best_i1_any, %best_i1_found, %best_i1_missing : tensor<2xi1>, tensor<2xi32>
  %best_v1_entry = stablehlo.reshape %best_v1 : (!row) -> tensor<1x2xf32>
  %best_i1_entry = stablehlo.reshape %best_i1 : (!row_i) -> tensor<1x2xi32>
  %best_after2_v = stablehlo.broadcast_in_dim %best_v1, dims = [0] : (!row) -> tensor<2x192xf32>
  %best_after2_i = stablehlo.broadcast_in_dim %best_i1, dims = [0] : (!row_i) -> tensor<2x192xi32>
  %best_below2 = stablehlo.compare LT, %candidates, %best_after2_v, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_equal2 = stablehlo.compare EQ, %candidates, %best_after2_v, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_later2 = stablehlo.compare GT, %candidate_columns, %best_after2_i, SIGNED : (tensor<2x192xi32>, tensor<2x192xi32>) -> tensor<2x192xi1>
  %best_tied2 = stablehlo.and %best_equal2, %best_later2 : tensor<2x192xi1>
  %best_eligible2 = stablehlo.or %best_below2, %best_tied2 : tensor<2x192xi1>
  %best_masked2 = stablehlo.select %best_eligible2, %candidates, %best_lowest_b : tensor<2x192xi1>, tensor<2x192xf32>
  %best_v2 = stablehlo.reduce(%best_masked2 init: %best_lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x192xf32>, tensor<f32>) -> !row
  %best_v2_b = stablehlo.broadcast_in_dim %best_v2, dims = [0] : (!row) -> tensor<2x192xf32>
  %best_best2 = stablehlo.compare EQ, %candidates, %best_v2_b, FLOAT : (tensor<2x192xf32>, tensor<2x192xf32>) -> tensor<2x192xi1>
  %best_hit2 = stablehlo.and %best_eligible2, %best_best2 : tensor<2x192xi1>
  %best_i2_bound = stablehlo.constant dense<320> : tensor<2x192xi32>
  %best_i2_flipped_i = stablehlo.subtract %best_i2_bound, %candidate_columns : tensor<2x192xi32>
  %best_i2_flipped = stablehlo.convert %best_i2_flipped_i : (tensor<2x192xi32>) -> tensor<2x192xf32>
  %best_i2_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %best_i2_zero_b = stablehlo.broadcast_in_dim %best_i2_zero, dims = [] : (tensor<f32>) -> tensor<2x192xf32>
  %best_i2_held = stablehlo.select %best_hit2, %best_i2_flipped, %best_i2_zero_b : tensor<2x192xi1>, tensor<2x192xf32>
  %best_i2_top = stablehlo.reduce(%best_i2_held init: %best_i2_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x192xf32>, tensor<f32>) -> tensor<2xf32>
  %best_i2_top_i = stablehlo.convert %best_i2_top : (tensor<2xf32>) -> tensor<2xi32>
  %best_i2_bound_row = stablehlo.constant dense<320> : tensor<2xi32>
  %best_i2_found = stablehlo.subtract %best_i2_bound_row, %best_i2_top_i : tensor<2xi32>
  %best_i2_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %best_i2_missing = stablehlo.constant dense<2147483647> : tensor<2xi32>
  %best_i2_any = stablehlo.compare GT, %best_i2_top_i, %best_i2_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %best_i2 = stablehlo.select %best_i2_any, %best_i2_found, %best_i2_missing : tensor<2xi1>, tensor<2xi32>
  %best_v2_entry = stablehlo.reshape %best_v2 : (!row) -> tensor<1x2xf32>
  %best_i2_entry = stablehlo.reshape %best_i2 : (!row_i) -> tensor<1x2xi32>
  %best_values_t = stablehlo.concatenate %best_v0_entry, %best_v1_entry, %best_v2_entry, dim = 0 : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %best_index_t = stablehlo.concatenate %best_i0_entry, %best_i1_entry, %best_i2_entry, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<3x2xi32>
  %best_values = stablehlo.transpose %best_values_t, dims = [1, 0] : (tensor<3x2xf32>) -> !top
  %best_index = stablehlo.transpose %best_index_t, dims = [1, 0] : (tensor<3x2xi32>) -> !top_i
  %first_2d = "stablehlo.slice"(%best_values) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (!top) -> tensor<2x1xf32>
  %first = stablehlo.reshape %first_2d : (tensor<2x1xf32>) -> !row
  %first_b = stablehlo.broadcast_in_dim %first, dims = [0] : (!row) -> !top
  %shift = stablehlo.subtract %best_values, %first_b : !top
  %logprob_b = stablehlo.broadcast_in_dim %greedy#1, dims = [0] : (!row) -> !top
  %top_logprobs = stablehlo.add %shift, %logprob_b : !top
  return %best_index, %top_logprobs : !top_i, !top
}
