!x = tensor<2x300xf32>
!columns = tensor<2x300xi32>
!mask = tensor<2x300xi1>
!row = tensor<2xf32>
!row_i = tensor<2xi32>
func.func private @token_select_R2_V300(%x: !x) -> (!row_i, !row, !row_i, !row_i) {
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %top = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [1] : (!x, tensor<f32>) -> !row
  %top_b = stablehlo.broadcast_in_dim %top, dims = [0] : (!row) -> !x
  %column = stablehlo.iota dim = 1 : !columns
  %none = stablehlo.constant dense<300> : tensor<i32>
  %none_b = stablehlo.broadcast_in_dim %none, dims = [] : (tensor<i32>) -> !columns
  %is_top = stablehlo.compare EQ, %x, %top_b, FLOAT : (!x, !x) -> !mask
  %top_columns = stablehlo.select %is_top, %column, %none_b : !mask, !columns
  %token = stablehlo.reduce(%top_columns init: %none) applies stablehlo.minimum across dimensions = [1] : (!columns, tensor<i32>) -> !row_i
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
  %nonfinite = stablehlo.reduce(%bad init: %zero_i) applies stablehlo.add across dimensions = [1] : (!columns, tensor<i32>) -> !row_i
  %bad_columns = stablehlo.select %finite, %none_b, %column : !mask, !columns
  %first_nonfinite = stablehlo.reduce(%bad_columns init: %none) applies stablehlo.minimum across dimensions = [1] : (!columns, tensor<i32>) -> !row_i
  return %token, %logprob, %nonfinite, %first_nonfinite : !row_i, !row, !row_i, !row_i
}
