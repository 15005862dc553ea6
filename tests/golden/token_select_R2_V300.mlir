!x = tensor<2x300xf32>
!columns = tensor<2x300xi32>
!mask = tensor<2x300xi1>
!row = tensor<2xf32>
!row_i = tensor<2xi32>
func.func private @token_select_R2_V300(%x: !x) -> (!row_i, !row, !row_i, !row_i) {
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [1] : (tensor<2x300xf32>, tensor<f32>) -> tensor<2xf32>
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0] : (!row) -> !x
  %column = stablehlo.iota dim = 1 : !columns
  %is_top = stablehlo.compare EQ, %x, %top_b, FLOAT : (!x, !x) -> !mask
  %token_bound = stablehlo.constant dense<300> : tensor<2x300xi32>
  %token_flipped_i = stablehlo.subtract %token_bound, %column : tensor<2x300xi32>
  %token_flipped = stablehlo.convert %token_flipped_i : (tensor<2x300xi32>) -> tensor<2x300xf32>
  %token_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %token_zero_b = stablehlo.broadcast_in_dim %token_zero, dims = [] : (tensor<f32>) -> tensor<2x300xf32>
  %token_held = stablehlo.select %is_top, %token_flipped, %token_zero_b : tensor<2x300xi1>, tensor<2x300xf32>
  %token_top = stablehlo.reduce(%token_held init: %token_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x300xf32>, tensor<f32>) -> tensor<2xf32>
  %token_top_i = stablehlo.convert %token_top : (tensor<2xf32>) -> tensor<2xi32>
  %token_bound_row = stablehlo.constant dense<300> : tensor<2xi32>
  %token_found = stablehlo.subtract %token_bound_row, %token_top_i : tensor<2xi32>
  %token_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %token_missing = stablehlo.constant dense<300> : tensor<2xi32>
  %token_any = stablehlo.compare GT, %token_top_i, %token_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %token = stablehlo.select %token_any, %token_found, %token_missing : tensor<2xi1>, tensor<2xi32>
  %shifted = stablehlo.subtract %x, %top_b : !x
  %e = stablehlo.exponential %shifted : !x
  %sum = func.call @lane_xor_sum_R2_W300_X4(%e) : (tensor<2x300xf32>) -> (tensor<2xf32>)
  %log_sum = stablehlo.log %sum : !row
  %logprob = stablehlo.negate %log_sum : !row
  %finite = stablehlo.is_finite %x : (!x) -> !mask
  %zero_i = stablehlo.constant dense<0> : tensor<i32>
  %zero_b = stablehlo.broadcast_in_dim %zero_i, dims = [] : (tensor<i32>) -> !columns
  %one_i = stablehlo.constant dense<1> : tensor<i32>
  %one_b = stablehlo.broadcast_in_dim %one_i, dims = [] : (tensor<i32>) -> !columns
  %bad = stablehlo.select %finite, %zero_b, %one_b : !mask, !columns
  %nonfinite = stablehlo.reduce(%bad init: %zero_i) applies stablehlo.add across dimensions = [1] : (tensor<2x300xi32>, tensor<i32>) -> tensor<2xi32>
  %true = stablehlo.constant dense<true> : !mask
  %nonfinite_at = stablehlo.xor %finite, %true : !mask
  %first_nonfinite_bound = stablehlo.constant dense<300> : tensor<2x300xi32>
  %first_nonfinite_flipped_i = stablehlo.subtract %first_nonfinite_bound, %column : tensor<2x300xi32>
  %first_nonfinite_flipped = stablehlo.convert %first_nonfinite_flipped_i : (tensor<2x300xi32>) -> tensor<2x300xf32>
  %first_nonfinite_zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %first_nonfinite_zero_b = stablehlo.broadcast_in_dim %first_nonfinite_zero, dims = [] : (tensor<f32>) -> tensor<2x300xf32>
  %first_nonfinite_held = stablehlo.select %nonfinite_at, %first_nonfinite_flipped, %first_nonfinite_zero_b : tensor<2x300xi1>, tensor<2x300xf32>
  %first_nonfinite_top = stablehlo.reduce(%first_nonfinite_held init: %first_nonfinite_zero) applies stablehlo.maximum across dimensions = [1] : (tensor<2x300xf32>, tensor<f32>) -> tensor<2xf32>
  %first_nonfinite_top_i = stablehlo.convert %first_nonfinite_top : (tensor<2xf32>) -> tensor<2xi32>
  %first_nonfinite_bound_row = stablehlo.constant dense<300> : tensor<2xi32>
  %first_nonfinite_found = stablehlo.subtract %first_nonfinite_bound_row, %first_nonfinite_top_i : tensor<2xi32>
  %first_nonfinite_zero_i = stablehlo.constant dense<0> : tensor<2xi32>
  %first_nonfinite_missing = stablehlo.constant dense<300> : tensor<2xi32>
  %first_nonfinite_any = stablehlo.compare GT, %first_nonfinite_top_i, %first_nonfinite_zero_i, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %first_nonfinite = stablehlo.select %first_nonfinite_any, %first_nonfinite_found, %first_nonfinite_missing : tensor<2xi1>, tensor<2xi32>
  return %token, %logprob, %nonfinite, %first_nonfinite : !row_i, !row, !row_i, !row_i
}
