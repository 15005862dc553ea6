!x = tensor<2x300xf32>
!c = tensor<2x64xf32>
!ci = tensor<2x64xi32>
!cm = tensor<2x64xi1>func.func private @token_sample_R2_V300_k64(%x: !x, %temperature: tensor<2xf32>, %top_k: tensor<2xi32>, %top_p: tensor<2xf32>, %seed: tensor<2xi32>, %counter: tensor<2xi32>) -> tensor<2xi32> {
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
  %sum_zero = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
  %tail_zero = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
  %cum_zero = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>
  %e0_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e0 = stablehlo.reshape %e0_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e1_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e1 = stablehlo.reshape %e1_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e2_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e2 = stablehlo.reshape %e2_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e3_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 3>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e3 = stablehlo.reshape %e3_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e4_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 4>, limit_indices = array<i64: 2, 5>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e4 = stablehlo.reshape %e4_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e5_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 5>, limit_indices = array<i64: 2, 6>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e5 = stablehlo.reshape %e5_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e6_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 6>, limit_indices = array<i64: 2, 7>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e6 = stablehlo.reshape %e6_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e7_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 7>, limit_indices = array<i64: 2, 8>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e7 = stablehlo.reshape %e7_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e8_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 8>, limit_indices = array<i64: 2, 9>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e8 = stablehlo.reshape %e8_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e9_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 9>, limit_indices = array<i64: 2, 10>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e9 = stablehlo.reshape %e9_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e10_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 10>, limit_indices = array<i64: 2, 11>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e10 = stablehlo.reshape %e10_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e11_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 11>, limit_indices = array<i64: 2, 12>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e11 = stablehlo.reshape %e11_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e12_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 12>, limit_indices = array<i64: 2, 13>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e12 = stablehlo.reshape %e12_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e13_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 13>, limit_indices = array<i64: 2, 14>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e13 = stablehlo.reshape %e13_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e14_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 14>, limit_indices = array<i64: 2, 15>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e14 = stablehlo.reshape %e14_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e15_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 15>, limit_indices = array<i64: 2, 16>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e15 = stablehlo.reshape %e15_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e16_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 16>, limit_indices = array<i64: 2, 17>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e16 = stablehlo.reshape %e16_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e17_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 17>, limit_indices = array<i64: 2, 18>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e17 = stablehlo.reshape %e17_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e18_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 18>, limit_indices = array<i64: 2, 19>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e18 = stablehlo.reshape %e18_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e19_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 19>, limit_indices = array<i64: 2, 20>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e19 = stablehlo.reshape %e19_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e20_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 20>, limit_indices = array<i64: 2, 21>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e20 = stablehlo.reshape %e20_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e21_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 21>, limit_indices = array<i64: 2, 22>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e21 = stablehlo.reshape %e21_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e22_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 22>, limit_indices = array<i64: 2, 23>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e22 = stablehlo.reshape %e22_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e23_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 23>, limit_indices = array<i64: 2, 24>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e23 = stablehlo.reshape %e23_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e24_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 24>, limit_indices = array<i64: 2, 25>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e24 = stablehlo.reshape %e24_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e25_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 25>, limit_indices = array<i64: 2, 26>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e25 = stablehlo.reshape %e25_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e26_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 26>, limit_indices = array<i64: 2, 27>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e26 = stablehlo.reshape %e26_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e27_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 27>, limit_indices = array<i64: 2, 28>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e27 = stablehlo.reshape %e27_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e28_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 28>, limit_indices = array<i64: 2, 29>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e28 = stablehlo.reshape %e28_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e29_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 29>, limit_indices = array<i64: 2, 30>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e29 = stablehlo.reshape %e29_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e30_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 30>, limit_indices = array<i64: 2, 31>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e30 = stablehlo.reshape %e30_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e31_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 31>, limit_indices = array<i64: 2, 32>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e31 = stablehlo.reshape %e31_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e32_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 32>, limit_indices = array<i64: 2, 33>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e32 = stablehlo.reshape %e32_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e33_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 33>, limit_indices = array<i64: 2, 34>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e33 = stablehlo.reshape %e33_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e34_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 34>, limit_indices = array<i64: 2, 35>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e34 = stablehlo.reshape %e34_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e35_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 35>, limit_indices = array<i64: 2, 36>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e35 = stablehlo.reshape %e35_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e36_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 36>, limit_indices = array<i64: 2, 37>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e36 = stablehlo.reshape %e36_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e37_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 37>, limit_indices = array<i64: 2, 38>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e37 = stablehlo.reshape %e37_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e38_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 38>, limit_indices = array<i64: 2, 39>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e38 = stablehlo.reshape %e38_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e39_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 39>, limit_indices = array<i64: 2, 40>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e39 = stablehlo.reshape %e39_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e40_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 40>, limit_indices = array<i64: 2, 41>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e40 = stablehlo.reshape %e40_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e41_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 41>, limit_indices = array<i64: 2, 42>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e41 = stablehlo.reshape %e41_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e42_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 42>, limit_indices = array<i64: 2, 43>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e42 = stablehlo.reshape %e42_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e43_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 43>, limit_indices = array<i64: 2, 44>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e43 = stablehlo.reshape %e43_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e44_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 44>, limit_indices = array<i64: 2, 45>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e44 = stablehlo.reshape %e44_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e45_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 45>, limit_indices = array<i64: 2, 46>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e45 = stablehlo.reshape %e45_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e46_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 46>, limit_indices = array<i64: 2, 47>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e46 = stablehlo.reshape %e46_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e47_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 47>, limit_indices = array<i64: 2, 48>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e47 = stablehlo.reshape %e47_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e48_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 48>, limit_indices = array<i64: 2, 49>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e48 = stablehlo.reshape %e48_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e49_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 49>, limit_indices = array<i64: 2, 50>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e49 = stablehlo.reshape %e49_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e50_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 50>, limit_indices = array<i64: 2, 51>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e50 = stablehlo.reshape %e50_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e51_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 51>, limit_indices = array<i64: 2, 52>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e51 = stablehlo.reshape %e51_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e52_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 52>, limit_indices = array<i64: 2, 53>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e52 = stablehlo.reshape %e52_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e53_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 53>, limit_indices = array<i64: 2, 54>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e53 = stablehlo.reshape %e53_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e54_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 54>, limit_indices = array<i64: 2, 55>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e54 = stablehlo.reshape %e54_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e55_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 55>, limit_indices = array<i64: 2, 56>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e55 = stablehlo.reshape %e55_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e56_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 56>, limit_indices = array<i64: 2, 57>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e56 = stablehlo.reshape %e56_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e57_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 57>, limit_indices = array<i64: 2, 58>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e57 = stablehlo.reshape %e57_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e58_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 58>, limit_indices = array<i64: 2, 59>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e58 = stablehlo.reshape %e58_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e59_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 59>, limit_indices = array<i64: 2, 60>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e59 = stablehlo.reshape %e59_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e60_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 60>, limit_indices = array<i64: 2, 61>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e60 = stablehlo.reshape %e60_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e61_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 61>, limit_indices = array<i64: 2, 62>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e61 = stablehlo.reshape %e61_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e62_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 62>, limit_indices = array<i64: 2, 63>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e62 = stablehlo.reshape %e62_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %e63_2d = "stablehlo.slice"(%e) {start_indices = array<i64: 0, 63>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %e63 = stablehlo.reshape %e63_2d : (tensor<2x1xf32>) -> tensor<2xf32>

  %sum_0 = stablehlo.add %e0, %sum_zero : tensor<2xf32>
  %sum_0_2d = stablehlo.reshape %sum_0 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_1 = stablehlo.add %sum_0, %e1 : tensor<2xf32>
  %sum_1_2d = stablehlo.reshape %sum_1 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_2 = stablehlo.add %sum_1, %e2 : tensor<2xf32>
  %sum_2_2d = stablehlo.reshape %sum_2 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_3 = stablehlo.add %sum_2, %e3 : tensor<2xf32>
  %sum_3_2d = stablehlo.reshape %sum_3 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_4 = stablehlo.add %sum_3, %e4 : tensor<2xf32>
  %sum_4_2d = stablehlo.reshape %sum_4 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_5 = stablehlo.add %sum_4, %e5 : tensor<2xf32>
  %sum_5_2d = stablehlo.reshape %sum_5 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_6 = stablehlo.add %sum_5, %e6 : tensor<2xf32>
  %sum_6_2d = stablehlo.reshape %sum_6 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_7 = stablehlo.add %sum_6, %e7 : tensor<2xf32>
  %sum_7_2d = stablehlo.reshape %sum_7 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_8 = stablehlo.add %sum_7, %e8 : tensor<2xf32>
  %sum_8_2d = stablehlo.reshape %sum_8 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_9 = stablehlo.add %sum_8, %e9 : tensor<2xf32>
  %sum_9_2d = stablehlo.reshape %sum_9 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_10 = stablehlo.add %sum_9, %e10 : tensor<2xf32>
  %sum_10_2d = stablehlo.reshape %sum_10 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_11 = stablehlo.add %sum_10, %e11 : tensor<2xf32>
  %sum_11_2d = stablehlo.reshape %sum_11 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_12 = stablehlo.add %sum_11, %e12 : tensor<2xf32>
  %sum_12_2d = stablehlo.reshape %sum_12 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_13 = stablehlo.add %sum_12, %e13 : tensor<2xf32>
  %sum_13_2d = stablehlo.reshape %sum_13 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_14 = stablehlo.add %sum_13, %e14 : tensor<2xf32>
  %sum_14_2d = stablehlo.reshape %sum_14 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_15 = stablehlo.add %sum_14, %e15 : tensor<2xf32>
  %sum_15_2d = stablehlo.reshape %sum_15 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_16 = stablehlo.add %sum_15, %e16 : tensor<2xf32>
  %sum_16_2d = stablehlo.reshape %sum_16 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_17 = stablehlo.add %sum_16, %e17 : tensor<2xf32>
  %sum_17_2d = stablehlo.reshape %sum_17 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_18 = stablehlo.add %sum_17, %e18 : tensor<2xf32>
  %sum_18_2d = stablehlo.reshape %sum_18 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_19 = stablehlo.add %sum_18, %e19 : tensor<2xf32>
  %sum_19_2d = stablehlo.reshape %sum_19 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_20 = stablehlo.add %sum_19, %e20 : tensor<2xf32>
  %sum_20_2d = stablehlo.reshape %sum_20 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_21 = stablehlo.add %sum_20, %e21 : tensor<2xf32>
  %sum_21_2d = stablehlo.reshape %sum_21 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_22 = stablehlo.add %sum_21, %e22 : tensor<2xf32>
  %sum_22_2d = stablehlo.reshape %sum_22 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_23 = stablehlo.add %sum_22, %e23 : tensor<2xf32>
  %sum_23_2d = stablehlo.reshape %sum_23 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_24 = stablehlo.add %sum_23, %e24 : tensor<2xf32>
  %sum_24_2d = stablehlo.reshape %sum_24 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_25 = stablehlo.add %sum_24, %e25 : tensor<2xf32>
  %sum_25_2d = stablehlo.reshape %sum_25 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_26 = stablehlo.add %sum_25, %e26 : tensor<2xf32>
  %sum_26_2d = stablehlo.reshape %sum_26 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_27 = stablehlo.add %sum_26, %e27 : tensor<2xf32>
  %sum_27_2d = stablehlo.reshape %sum_27 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_28 = stablehlo.add %sum_27, %e28 : tensor<2xf32>
  %sum_28_2d = stablehlo.reshape %sum_28 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_29 = stablehlo.add %sum_28, %e29 : tensor<2xf32>
  %sum_29_2d = stablehlo.reshape %sum_29 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_30 = stablehlo.add %sum_29, %e30 : tensor<2xf32>
  %sum_30_2d = stablehlo.reshape %sum_30 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_31 = stablehlo.add %sum_30, %e31 : tensor<2xf32>
  %sum_31_2d = stablehlo.reshape %sum_31 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_32 = stablehlo.add %sum_31, %e32 : tensor<2xf32>
  %sum_32_2d = stablehlo.reshape %sum_32 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_33 = stablehlo.add %sum_32, %e33 : tensor<2xf32>
  %sum_33_2d = stablehlo.reshape %sum_33 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_34 = stablehlo.add %sum_33, %e34 : tensor<2xf32>
  %sum_34_2d = stablehlo.reshape %sum_34 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_35 = stablehlo.add %sum_34, %e35 : tensor<2xf32>
  %sum_35_2d = stablehlo.reshape %sum_35 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_36 = stablehlo.add %sum_35, %e36 : tensor<2xf32>
  %sum_36_2d = stablehlo.reshape %sum_36 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_37 = stablehlo.add %sum_36, %e37 : tensor<2xf32>
  %sum_37_2d = stablehlo.reshape %sum_37 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_38 = stablehlo.add %sum_37, %e38 : tensor<2xf32>
  %sum_38_2d = stablehlo.reshape %sum_38 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_39 = stablehlo.add %sum_38, %e39 : tensor<2xf32>
  %sum_39_2d = stablehlo.reshape %sum_39 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_40 = stablehlo.add %sum_39, %e40 : tensor<2xf32>
  %sum_40_2d = stablehlo.reshape %sum_40 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_41 = stablehlo.add %sum_40, %e41 : tensor<2xf32>
  %sum_41_2d = stablehlo.reshape %sum_41 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_42 = stablehlo.add %sum_41, %e42 : tensor<2xf32>
  %sum_42_2d = stablehlo.reshape %sum_42 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_43 = stablehlo.add %sum_42, %e43 : tensor<2xf32>
  %sum_43_2d = stablehlo.reshape %sum_43 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_44 = stablehlo.add %sum_43, %e44 : tensor<2xf32>
  %sum_44_2d = stablehlo.reshape %sum_44 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_45 = stablehlo.add %sum_44, %e45 : tensor<2xf32>
  %sum_45_2d = stablehlo.reshape %sum_45 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_46 = stablehlo.add %sum_45, %e46 : tensor<2xf32>
  %sum_46_2d = stablehlo.reshape %sum_46 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_47 = stablehlo.add %sum_46, %e47 : tensor<2xf32>
  %sum_47_2d = stablehlo.reshape %sum_47 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_48 = stablehlo.add %sum_47, %e48 : tensor<2xf32>
  %sum_48_2d = stablehlo.reshape %sum_48 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_49 = stablehlo.add %sum_48, %e49 : tensor<2xf32>
  %sum_49_2d = stablehlo.reshape %sum_49 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_50 = stablehlo.add %sum_49, %e50 : tensor<2xf32>
  %sum_50_2d = stablehlo.reshape %sum_50 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_51 = stablehlo.add %sum_50, %e51 : tensor<2xf32>
  %sum_51_2d = stablehlo.reshape %sum_51 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_52 = stablehlo.add %sum_51, %e52 : tensor<2xf32>
  %sum_52_2d = stablehlo.reshape %sum_52 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_53 = stablehlo.add %sum_52, %e53 : tensor<2xf32>
  %sum_53_2d = stablehlo.reshape %sum_53 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_54 = stablehlo.add %sum_53, %e54 : tensor<2xf32>
  %sum_54_2d = stablehlo.reshape %sum_54 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_55 = stablehlo.add %sum_54, %e55 : tensor<2xf32>
  %sum_55_2d = stablehlo.reshape %sum_55 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_56 = stablehlo.add %sum_55, %e56 : tensor<2xf32>
  %sum_56_2d = stablehlo.reshape %sum_56 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_57 = stablehlo.add %sum_56, %e57 : tensor<2xf32>
  %sum_57_2d = stablehlo.reshape %sum_57 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_58 = stablehlo.add %sum_57, %e58 : tensor<2xf32>
  %sum_58_2d = stablehlo.reshape %sum_58 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_59 = stablehlo.add %sum_58, %e59 : tensor<2xf32>
  %sum_59_2d = stablehlo.reshape %sum_59 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_60 = stablehlo.add %sum_59, %e60 : tensor<2xf32>
  %sum_60_2d = stablehlo.reshape %sum_60 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_61 = stablehlo.add %sum_60, %e61 : tensor<2xf32>
  %sum_61_2d = stablehlo.reshape %sum_61 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_62 = stablehlo.add %sum_61, %e62 : tensor<2xf32>
  %sum_62_2d = stablehlo.reshape %sum_62 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum_63 = stablehlo.add %sum_62, %e63 : tensor<2xf32>
  %sum_63_2d = stablehlo.reshape %sum_63 : (tensor<2xf32>) -> tensor<2x1xf32>
  %sum = stablehlo.concatenate %sum_0_2d, %sum_1_2d, %sum_2_2d, %sum_3_2d, %sum_4_2d, %sum_5_2d, %sum_6_2d, %sum_7_2d, %sum_8_2d, %sum_9_2d, %sum_10_2d, %sum_11_2d, %sum_12_2d, %sum_13_2d, %sum_14_2d, %sum_15_2d, %sum_16_2d, %sum_17_2d, %sum_18_2d, %sum_19_2d, %sum_20_2d, %sum_21_2d, %sum_22_2d, %sum_23_2d, %sum_24_2d, %sum_25_2d, %sum_26_2d, %sum_27_2d, %sum_28_2d, %sum_29_2d, %sum_30_2d, %sum_31_2d, %sum_32_2d, %sum_33_2d, %sum_34_2d, %sum_35_2d, %sum_36_2d, %sum_37_2d, %sum_38_2d, %sum_39_2d, %sum_40_2d, %sum_41_2d, %sum_42_2d, %sum_43_2d, %sum_44_2d, %sum_45_2d, %sum_46_2d, %sum_47_2d, %sum_48_2d, %sum_49_2d, %sum_50_2d, %sum_51_2d, %sum_52_2d, %sum_53_2d, %sum_54_2d, %sum_55_2d, %sum_56_2d, %sum_57_2d, %sum_58_2d, %sum_59_2d, %sum_60_2d, %sum_61_2d, %sum_62_2d, %sum_63_2d, dim = 1 : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> !c
  %total_2d = "stablehlo.slice"(%sum) {start_indices = array<i64: 0, 63>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %total = stablehlo.reshape %total_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %total_b = stablehlo.broadcast_in_dim %total, dims = [0] : (tensor<2xf32>) -> !c
  %p_a64 = stablehlo.convert %e : (tensor<2x64xf32>) -> tensor<2x64xf64>
  %p_b64 = stablehlo.convert %total_b : (tensor<2x64xf32>) -> tensor<2x64xf64>
  %p_64 = stablehlo.divide %p_a64, %p_b64 : tensor<2x64xf64>
  %p = stablehlo.convert %p_64 : (tensor<2x64xf64>) -> tensor<2x64xf32>
  %p0_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p0 = stablehlo.reshape %p0_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p1_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p1 = stablehlo.reshape %p1_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p2_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p2 = stablehlo.reshape %p2_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p3_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 3>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p3 = stablehlo.reshape %p3_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p4_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 4>, limit_indices = array<i64: 2, 5>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p4 = stablehlo.reshape %p4_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p5_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 5>, limit_indices = array<i64: 2, 6>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p5 = stablehlo.reshape %p5_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p6_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 6>, limit_indices = array<i64: 2, 7>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p6 = stablehlo.reshape %p6_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p7_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 7>, limit_indices = array<i64: 2, 8>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p7 = stablehlo.reshape %p7_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p8_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 8>, limit_indices = array<i64: 2, 9>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p8 = stablehlo.reshape %p8_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p9_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 9>, limit_indices = array<i64: 2, 10>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p9 = stablehlo.reshape %p9_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p10_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 10>, limit_indices = array<i64: 2, 11>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p10 = stablehlo.reshape %p10_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p11_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 11>, limit_indices = array<i64: 2, 12>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p11 = stablehlo.reshape %p11_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p12_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 12>, limit_indices = array<i64: 2, 13>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p12 = stablehlo.reshape %p12_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p13_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 13>, limit_indices = array<i64: 2, 14>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p13 = stablehlo.reshape %p13_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p14_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 14>, limit_indices = array<i64: 2, 15>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p14 = stablehlo.reshape %p14_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p15_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 15>, limit_indices = array<i64: 2, 16>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p15 = stablehlo.reshape %p15_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p16_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 16>, limit_indices = array<i64: 2, 17>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p16 = stablehlo.reshape %p16_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p17_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 17>, limit_indices = array<i64: 2, 18>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p17 = stablehlo.reshape %p17_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p18_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 18>, limit_indices = array<i64: 2, 19>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p18 = stablehlo.reshape %p18_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p19_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 19>, limit_indices = array<i64: 2, 20>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p19 = stablehlo.reshape %p19_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p20_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 20>, limit_indices = array<i64: 2, 21>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p20 = stablehlo.reshape %p20_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p21_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 21>, limit_indices = array<i64: 2, 22>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p21 = stablehlo.reshape %p21_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p22_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 22>, limit_indices = array<i64: 2, 23>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p22 = stablehlo.reshape %p22_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p23_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 23>, limit_indices = array<i64: 2, 24>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p23 = stablehlo.reshape %p23_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p24_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 24>, limit_indices = array<i64: 2, 25>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p24 = stablehlo.reshape %p24_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p25_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 25>, limit_indices = array<i64: 2, 26>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p25 = stablehlo.reshape %p25_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p26_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 26>, limit_indices = array<i64: 2, 27>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p26 = stablehlo.reshape %p26_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p27_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 27>, limit_indices = array<i64: 2, 28>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p27 = stablehlo.reshape %p27_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p28_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 28>, limit_indices = array<i64: 2, 29>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p28 = stablehlo.reshape %p28_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p29_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 29>, limit_indices = array<i64: 2, 30>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p29 = stablehlo.reshape %p29_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p30_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 30>, limit_indices = array<i64: 2, 31>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p30 = stablehlo.reshape %p30_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p31_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 31>, limit_indices = array<i64: 2, 32>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p31 = stablehlo.reshape %p31_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p32_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 32>, limit_indices = array<i64: 2, 33>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p32 = stablehlo.reshape %p32_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p33_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 33>, limit_indices = array<i64: 2, 34>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p33 = stablehlo.reshape %p33_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p34_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 34>, limit_indices = array<i64: 2, 35>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p34 = stablehlo.reshape %p34_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p35_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 35>, limit_indices = array<i64: 2, 36>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p35 = stablehlo.reshape %p35_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p36_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 36>, limit_indices = array<i64: 2, 37>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p36 = stablehlo.reshape %p36_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p37_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 37>, limit_indices = array<i64: 2, 38>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p37 = stablehlo.reshape %p37_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p38_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 38>, limit_indices = array<i64: 2, 39>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p38 = stablehlo.reshape %p38_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p39_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 39>, limit_indices = array<i64: 2, 40>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p39 = stablehlo.reshape %p39_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p40_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 40>, limit_indices = array<i64: 2, 41>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p40 = stablehlo.reshape %p40_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p41_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 41>, limit_indices = array<i64: 2, 42>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p41 = stablehlo.reshape %p41_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p42_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 42>, limit_indices = array<i64: 2, 43>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p42 = stablehlo.reshape %p42_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p43_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 43>, limit_indices = array<i64: 2, 44>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p43 = stablehlo.reshape %p43_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p44_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 44>, limit_indices = array<i64: 2, 45>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p44 = stablehlo.reshape %p44_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p45_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 45>, limit_indices = array<i64: 2, 46>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p45 = stablehlo.reshape %p45_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p46_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 46>, limit_indices = array<i64: 2, 47>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p46 = stablehlo.reshape %p46_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p47_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 47>, limit_indices = array<i64: 2, 48>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p47 = stablehlo.reshape %p47_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p48_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 48>, limit_indices = array<i64: 2, 49>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p48 = stablehlo.reshape %p48_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p49_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 49>, limit_indices = array<i64: 2, 50>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p49 = stablehlo.reshape %p49_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p50_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 50>, limit_indices = array<i64: 2, 51>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p50 = stablehlo.reshape %p50_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p51_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 51>, limit_indices = array<i64: 2, 52>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p51 = stablehlo.reshape %p51_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p52_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 52>, limit_indices = array<i64: 2, 53>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p52 = stablehlo.reshape %p52_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p53_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 53>, limit_indices = array<i64: 2, 54>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p53 = stablehlo.reshape %p53_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p54_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 54>, limit_indices = array<i64: 2, 55>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p54 = stablehlo.reshape %p54_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p55_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 55>, limit_indices = array<i64: 2, 56>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p55 = stablehlo.reshape %p55_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p56_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 56>, limit_indices = array<i64: 2, 57>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p56 = stablehlo.reshape %p56_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p57_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 57>, limit_indices = array<i64: 2, 58>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p57 = stablehlo.reshape %p57_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p58_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 58>, limit_indices = array<i64: 2, 59>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p58 = stablehlo.reshape %p58_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p59_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 59>, limit_indices = array<i64: 2, 60>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p59 = stablehlo.reshape %p59_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p60_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 60>, limit_indices = array<i64: 2, 61>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p60 = stablehlo.reshape %p60_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p61_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 61>, limit_indices = array<i64: 2, 62>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p61 = stablehlo.reshape %p61_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p62_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 62>, limit_indices = array<i64: 2, 63>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p62 = stablehlo.reshape %p62_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %p63_2d = "stablehlo.slice"(%p) {start_indices = array<i64: 0, 63>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %p63 = stablehlo.reshape %p63_2d : (tensor<2x1xf32>) -> tensor<2xf32>

  %tail_63 = stablehlo.add %p63, %tail_zero : tensor<2xf32>
  %tail_63_2d = stablehlo.reshape %tail_63 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_62 = stablehlo.add %tail_63, %p62 : tensor<2xf32>
  %tail_62_2d = stablehlo.reshape %tail_62 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_61 = stablehlo.add %tail_62, %p61 : tensor<2xf32>
  %tail_61_2d = stablehlo.reshape %tail_61 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_60 = stablehlo.add %tail_61, %p60 : tensor<2xf32>
  %tail_60_2d = stablehlo.reshape %tail_60 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_59 = stablehlo.add %tail_60, %p59 : tensor<2xf32>
  %tail_59_2d = stablehlo.reshape %tail_59 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_58 = stablehlo.add %tail_59, %p58 : tensor<2xf32>
  %tail_58_2d = stablehlo.reshape %tail_58 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_57 = stablehlo.add %tail_58, %p57 : tensor<2xf32>
  %tail_57_2d = stablehlo.reshape %tail_57 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_56 = stablehlo.add %tail_57, %p56 : tensor<2xf32>
  %tail_56_2d = stablehlo.reshape %tail_56 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_55 = stablehlo.add %tail_56, %p55 : tensor<2xf32>
  %tail_55_2d = stablehlo.reshape %tail_55 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_54 = stablehlo.add %tail_55, %p54 : tensor<2xf32>
  %tail_54_2d = stablehlo.reshape %tail_54 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_53 = stablehlo.add %tail_54, %p53 : tensor<2xf32>
  %tail_53_2d = stablehlo.reshape %tail_53 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_52 = stablehlo.add %tail_53, %p52 : tensor<2xf32>
  %tail_52_2d = stablehlo.reshape %tail_52 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_51 = stablehlo.add %tail_52, %p51 : tensor<2xf32>
  %tail_51_2d = stablehlo.reshape %tail_51 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_50 = stablehlo.add %tail_51, %p50 : tensor<2xf32>
  %tail_50_2d = stablehlo.reshape %tail_50 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_49 = stablehlo.add %tail_50, %p49 : tensor<2xf32>
  %tail_49_2d = stablehlo.reshape %tail_49 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_48 = stablehlo.add %tail_49, %p48 : tensor<2xf32>
  %tail_48_2d = stablehlo.reshape %tail_48 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_47 = stablehlo.add %tail_48, %p47 : tensor<2xf32>
  %tail_47_2d = stablehlo.reshape %tail_47 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_46 = stablehlo.add %tail_47, %p46 : tensor<2xf32>
  %tail_46_2d = stablehlo.reshape %tail_46 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_45 = stablehlo.add %tail_46, %p45 : tensor<2xf32>
  %tail_45_2d = stablehlo.reshape %tail_45 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_44 = stablehlo.add %tail_45, %p44 : tensor<2xf32>
  %tail_44_2d = stablehlo.reshape %tail_44 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_43 = stablehlo.add %tail_44, %p43 : tensor<2xf32>
  %tail_43_2d = stablehlo.reshape %tail_43 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_42 = stablehlo.add %tail_43, %p42 : tensor<2xf32>
  %tail_42_2d = stablehlo.reshape %tail_42 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_41 = stablehlo.add %tail_42, %p41 : tensor<2xf32>
  %tail_41_2d = stablehlo.reshape %tail_41 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_40 = stablehlo.add %tail_41, %p40 : tensor<2xf32>
  %tail_40_2d = stablehlo.reshape %tail_40 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_39 = stablehlo.add %tail_40, %p39 : tensor<2xf32>
  %tail_39_2d = stablehlo.reshape %tail_39 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_38 = stablehlo.add %tail_39, %p38 : tensor<2xf32>
  %tail_38_2d = stablehlo.reshape %tail_38 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_37 = stablehlo.add %tail_38, %p37 : tensor<2xf32>
  %tail_37_2d = stablehlo.reshape %tail_37 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_36 = stablehlo.add %tail_37, %p36 : tensor<2xf32>
  %tail_36_2d = stablehlo.reshape %tail_36 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_35 = stablehlo.add %tail_36, %p35 : tensor<2xf32>
  %tail_35_2d = stablehlo.reshape %tail_35 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_34 = stablehlo.add %tail_35, %p34 : tensor<2xf32>
  %tail_34_2d = stablehlo.reshape %tail_34 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_33 = stablehlo.add %tail_34, %p33 : tensor<2xf32>
  %tail_33_2d = stablehlo.reshape %tail_33 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_32 = stablehlo.add %tail_33, %p32 : tensor<2xf32>
  %tail_32_2d = stablehlo.reshape %tail_32 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_31 = stablehlo.add %tail_32, %p31 : tensor<2xf32>
  %tail_31_2d = stablehlo.reshape %tail_31 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_30 = stablehlo.add %tail_31, %p30 : tensor<2xf32>
  %tail_30_2d = stablehlo.reshape %tail_30 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_29 = stablehlo.add %tail_30, %p29 : tensor<2xf32>
  %tail_29_2d = stablehlo.reshape %tail_29 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_28 = stablehlo.add %tail_29, %p28 : tensor<2xf32>
  %tail_28_2d = stablehlo.reshape %tail_28 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_27 = stablehlo.add %tail_28, %p27 : tensor<2xf32>
  %tail_27_2d = stablehlo.reshape %tail_27 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_26 = stablehlo.add %tail_27, %p26 : tensor<2xf32>
  %tail_26_2d = stablehlo.reshape %tail_26 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_25 = stablehlo.add %tail_26, %p25 : tensor<2xf32>
  %tail_25_2d = stablehlo.reshape %tail_25 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_24 = stablehlo.add %tail_25, %p24 : tensor<2xf32>
  %tail_24_2d = stablehlo.reshape %tail_24 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_23 = stablehlo.add %tail_24, %p23 : tensor<2xf32>
  %tail_23_2d = stablehlo.reshape %tail_23 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_22 = stablehlo.add %tail_23, %p22 : tensor<2xf32>
  %tail_22_2d = stablehlo.reshape %tail_22 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_21 = stablehlo.add %tail_22, %p21 : tensor<2xf32>
  %tail_21_2d = stablehlo.reshape %tail_21 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_20 = stablehlo.add %tail_21, %p20 : tensor<2xf32>
  %tail_20_2d = stablehlo.reshape %tail_20 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_19 = stablehlo.add %tail_20, %p19 : tensor<2xf32>
  %tail_19_2d = stablehlo.reshape %tail_19 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_18 = stablehlo.add %tail_19, %p18 : tensor<2xf32>
  %tail_18_2d = stablehlo.reshape %tail_18 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_17 = stablehlo.add %tail_18, %p17 : tensor<2xf32>
  %tail_17_2d = stablehlo.reshape %tail_17 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_16 = stablehlo.add %tail_17, %p16 : tensor<2xf32>
  %tail_16_2d = stablehlo.reshape %tail_16 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_15 = stablehlo.add %tail_16, %p15 : tensor<2xf32>
  %tail_15_2d = stablehlo.reshape %tail_15 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_14 = stablehlo.add %tail_15, %p14 : tensor<2xf32>
  %tail_14_2d = stablehlo.reshape %tail_14 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_13 = stablehlo.add %tail_14, %p13 : tensor<2xf32>
  %tail_13_2d = stablehlo.reshape %tail_13 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_12 = stablehlo.add %tail_13, %p12 : tensor<2xf32>
  %tail_12_2d = stablehlo.reshape %tail_12 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_11 = stablehlo.add %tail_12, %p11 : tensor<2xf32>
  %tail_11_2d = stablehlo.reshape %tail_11 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_10 = stablehlo.add %tail_11, %p10 : tensor<2xf32>
  %tail_10_2d = stablehlo.reshape %tail_10 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_9 = stablehlo.add %tail_10, %p9 : tensor<2xf32>
  %tail_9_2d = stablehlo.reshape %tail_9 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_8 = stablehlo.add %tail_9, %p8 : tensor<2xf32>
  %tail_8_2d = stablehlo.reshape %tail_8 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_7 = stablehlo.add %tail_8, %p7 : tensor<2xf32>
  %tail_7_2d = stablehlo.reshape %tail_7 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_6 = stablehlo.add %tail_7, %p6 : tensor<2xf32>
  %tail_6_2d = stablehlo.reshape %tail_6 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_5 = stablehlo.add %tail_6, %p5 : tensor<2xf32>
  %tail_5_2d = stablehlo.reshape %tail_5 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_4 = stablehlo.add %tail_5, %p4 : tensor<2xf32>
  %tail_4_2d = stablehlo.reshape %tail_4 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_3 = stablehlo.add %tail_4, %p3 : tensor<2xf32>
  %tail_3_2d = stablehlo.reshape %tail_3 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_2 = stablehlo.add %tail_3, %p2 : tensor<2xf32>
  %tail_2_2d = stablehlo.reshape %tail_2 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_1 = stablehlo.add %tail_2, %p1 : tensor<2xf32>
  %tail_1_2d = stablehlo.reshape %tail_1 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail_0 = stablehlo.add %tail_1, %p0 : tensor<2xf32>
  %tail_0_2d = stablehlo.reshape %tail_0 : (tensor<2xf32>) -> tensor<2x1xf32>
  %tail = stablehlo.concatenate %tail_0_2d, %tail_1_2d, %tail_2_2d, %tail_3_2d, %tail_4_2d, %tail_5_2d, %tail_6_2d, %tail_7_2d, %tail_8_2d, %tail_9_2d, %tail_10_2d, %tail_11_2d, %tail_12_2d, %tail_13_2d, %tail_14_2d, %tail_15_2d, %tail_16_2d, %tail_17_2d, %tail_18_2d, %tail_19_2d, %tail_20_2d, %tail_21_2d, %tail_22_2d, %tail_23_2d, %tail_24_2d, %tail_25_2d, %tail_26_2d, %tail_27_2d, %tail_28_2d, %tail_29_2d, %tail_30_2d, %tail_31_2d, %tail_32_2d, %tail_33_2d, %tail_34_2d, %tail_35_2d, %tail_36_2d, %tail_37_2d, %tail_38_2d, %tail_39_2d, %tail_40_2d, %tail_41_2d, %tail_42_2d, %tail_43_2d, %tail_44_2d, %tail_45_2d, %tail_46_2d, %tail_47_2d, %tail_48_2d, %tail_49_2d, %tail_50_2d, %tail_51_2d, %tail_52_2d, %tail_53_2d, %tail_54_2d, %tail_55_2d, %tail_56_2d, %tail_57_2d, %tail_58_2d, %tail_59_2d, %tail_60_2d, %tail_61_2d, %tail_62_2d, %tail_63_2d, dim = 1 : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> !c
  %one = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
  %floor = stablehlo.subtract %one, %top_p : tensor<2xf32>
  %floor_b = stablehlo.broadcast_in_dim %floor, dims = [0] : (tensor<2xf32>) -> !c
  %in_top_p = stablehlo.compare GT, %tail, %floor_b, FLOAT : (!c, !c) -> !cm
  %first_rank = stablehlo.constant dense<0> : !ci
  %is_first = stablehlo.compare EQ, %rank, %first_rank, SIGNED : (!ci, !ci) -> !cm
  %in_top_p_or_first = stablehlo.or %in_top_p, %is_first : !cm
  %kept = stablehlo.and %in_top_k, %in_top_p_or_first : !cm
  %w = stablehlo.select %kept, %e, %zero_c : !cm, !c
  %w0_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w0 = stablehlo.reshape %w0_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w1_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w1 = stablehlo.reshape %w1_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w2_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 2>, limit_indices = array<i64: 2, 3>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w2 = stablehlo.reshape %w2_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w3_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 3>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w3 = stablehlo.reshape %w3_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w4_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 4>, limit_indices = array<i64: 2, 5>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w4 = stablehlo.reshape %w4_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w5_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 5>, limit_indices = array<i64: 2, 6>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w5 = stablehlo.reshape %w5_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w6_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 6>, limit_indices = array<i64: 2, 7>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w6 = stablehlo.reshape %w6_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w7_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 7>, limit_indices = array<i64: 2, 8>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w7 = stablehlo.reshape %w7_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w8_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 8>, limit_indices = array<i64: 2, 9>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w8 = stablehlo.reshape %w8_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w9_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 9>, limit_indices = array<i64: 2, 10>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w9 = stablehlo.reshape %w9_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w10_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 10>, limit_indices = array<i64: 2, 11>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w10 = stablehlo.reshape %w10_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w11_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 11>, limit_indices = array<i64: 2, 12>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w11 = stablehlo.reshape %w11_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w12_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 12>, limit_indices = array<i64: 2, 13>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w12 = stablehlo.reshape %w12_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w13_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 13>, limit_indices = array<i64: 2, 14>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w13 = stablehlo.reshape %w13_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w14_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 14>, limit_indices = array<i64: 2, 15>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w14 = stablehlo.reshape %w14_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w15_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 15>, limit_indices = array<i64: 2, 16>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w15 = stablehlo.reshape %w15_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w16_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 16>, limit_indices = array<i64: 2, 17>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w16 = stablehlo.reshape %w16_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w17_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 17>, limit_indices = array<i64: 2, 18>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w17 = stablehlo.reshape %w17_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w18_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 18>, limit_indices = array<i64: 2, 19>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w18 = stablehlo.reshape %w18_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w19_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 19>, limit_indices = array<i64: 2, 20>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w19 = stablehlo.reshape %w19_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w20_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 20>, limit_indices = array<i64: 2, 21>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w20 = stablehlo.reshape %w20_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w21_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 21>, limit_indices = array<i64: 2, 22>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w21 = stablehlo.reshape %w21_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w22_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 22>, limit_indices = array<i64: 2, 23>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w22 = stablehlo.reshape %w22_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w23_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 23>, limit_indices = array<i64: 2, 24>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w23 = stablehlo.reshape %w23_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w24_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 24>, limit_indices = array<i64: 2, 25>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w24 = stablehlo.reshape %w24_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w25_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 25>, limit_indices = array<i64: 2, 26>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w25 = stablehlo.reshape %w25_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w26_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 26>, limit_indices = array<i64: 2, 27>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w26 = stablehlo.reshape %w26_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w27_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 27>, limit_indices = array<i64: 2, 28>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w27 = stablehlo.reshape %w27_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w28_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 28>, limit_indices = array<i64: 2, 29>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w28 = stablehlo.reshape %w28_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w29_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 29>, limit_indices = array<i64: 2, 30>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w29 = stablehlo.reshape %w29_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w30_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 30>, limit_indices = array<i64: 2, 31>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w30 = stablehlo.reshape %w30_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w31_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 31>, limit_indices = array<i64: 2, 32>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w31 = stablehlo.reshape %w31_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w32_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 32>, limit_indices = array<i64: 2, 33>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w32 = stablehlo.reshape %w32_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w33_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 33>, limit_indices = array<i64: 2, 34>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w33 = stablehlo.reshape %w33_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w34_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 34>, limit_indices = array<i64: 2, 35>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w34 = stablehlo.reshape %w34_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w35_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 35>, limit_indices = array<i64: 2, 36>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w35 = stablehlo.reshape %w35_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w36_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 36>, limit_indices = array<i64: 2, 37>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w36 = stablehlo.reshape %w36_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w37_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 37>, limit_indices = array<i64: 2, 38>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w37 = stablehlo.reshape %w37_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w38_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 38>, limit_indices = array<i64: 2, 39>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w38 = stablehlo.reshape %w38_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w39_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 39>, limit_indices = array<i64: 2, 40>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w39 = stablehlo.reshape %w39_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w40_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 40>, limit_indices = array<i64: 2, 41>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w40 = stablehlo.reshape %w40_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w41_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 41>, limit_indices = array<i64: 2, 42>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w41 = stablehlo.reshape %w41_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w42_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 42>, limit_indices = array<i64: 2, 43>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w42 = stablehlo.reshape %w42_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w43_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 43>, limit_indices = array<i64: 2, 44>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w43 = stablehlo.reshape %w43_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w44_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 44>, limit_indices = array<i64: 2, 45>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w44 = stablehlo.reshape %w44_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w45_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 45>, limit_indices = array<i64: 2, 46>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w45 = stablehlo.reshape %w45_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w46_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 46>, limit_indices = array<i64: 2, 47>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w46 = stablehlo.reshape %w46_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w47_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 47>, limit_indices = array<i64: 2, 48>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w47 = stablehlo.reshape %w47_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w48_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 48>, limit_indices = array<i64: 2, 49>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w48 = stablehlo.reshape %w48_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w49_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 49>, limit_indices = array<i64: 2, 50>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w49 = stablehlo.reshape %w49_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w50_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 50>, limit_indices = array<i64: 2, 51>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w50 = stablehlo.reshape %w50_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w51_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 51>, limit_indices = array<i64: 2, 52>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w51 = stablehlo.reshape %w51_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w52_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 52>, limit_indices = array<i64: 2, 53>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w52 = stablehlo.reshape %w52_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w53_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 53>, limit_indices = array<i64: 2, 54>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w53 = stablehlo.reshape %w53_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w54_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 54>, limit_indices = array<i64: 2, 55>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w54 = stablehlo.reshape %w54_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w55_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 55>, limit_indices = array<i64: 2, 56>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w55 = stablehlo.reshape %w55_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w56_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 56>, limit_indices = array<i64: 2, 57>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w56 = stablehlo.reshape %w56_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w57_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 57>, limit_indices = array<i64: 2, 58>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w57 = stablehlo.reshape %w57_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w58_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 58>, limit_indices = array<i64: 2, 59>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w58 = stablehlo.reshape %w58_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w59_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 59>, limit_indices = array<i64: 2, 60>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w59 = stablehlo.reshape %w59_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w60_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 60>, limit_indices = array<i64: 2, 61>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w60 = stablehlo.reshape %w60_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w61_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 61>, limit_indices = array<i64: 2, 62>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w61 = stablehlo.reshape %w61_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w62_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 62>, limit_indices = array<i64: 2, 63>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w62 = stablehlo.reshape %w62_2d : (tensor<2x1xf32>) -> tensor<2xf32>
  %w63_2d = "stablehlo.slice"(%w) {start_indices = array<i64: 0, 63>, limit_indices = array<i64: 2, 64>, strides = array<i64: 1, 1>} : (!c) -> tensor<2x1xf32>
  %w63 = stablehlo.reshape %w63_2d : (tensor<2x1xf32>) -> tensor<2xf32>

  %cum_0 = stablehlo.add %w0, %cum_zero : tensor<2xf32>
  %cum_0_2d = stablehlo.reshape %cum_0 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_1 = stablehlo.add %cum_0, %w1 : tensor<2xf32>
  %cum_1_2d = stablehlo.reshape %cum_1 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_2 = stablehlo.add %cum_1, %w2 : tensor<2xf32>
  %cum_2_2d = stablehlo.reshape %cum_2 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_3 = stablehlo.add %cum_2, %w3 : tensor<2xf32>
  %cum_3_2d = stablehlo.reshape %cum_3 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_4 = stablehlo.add %cum_3, %w4 : tensor<2xf32>
  %cum_4_2d = stablehlo.reshape %cum_4 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_5 = stablehlo.add %cum_4, %w5 : tensor<2xf32>
  %cum_5_2d = stablehlo.reshape %cum_5 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_6 = stablehlo.add %cum_5, %w6 : tensor<2xf32>
  %cum_6_2d = stablehlo.reshape %cum_6 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_7 = stablehlo.add %cum_6, %w7 : tensor<2xf32>
  %cum_7_2d = stablehlo.reshape %cum_7 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_8 = stablehlo.add %cum_7, %w8 : tensor<2xf32>
  %cum_8_2d = stablehlo.reshape %cum_8 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_9 = stablehlo.add %cum_8, %w9 : tensor<2xf32>
  %cum_9_2d = stablehlo.reshape %cum_9 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_10 = stablehlo.add %cum_9, %w10 : tensor<2xf32>
  %cum_10_2d = stablehlo.reshape %cum_10 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_11 = stablehlo.add %cum_10, %w11 : tensor<2xf32>
  %cum_11_2d = stablehlo.reshape %cum_11 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_12 = stablehlo.add %cum_11, %w12 : tensor<2xf32>
  %cum_12_2d = stablehlo.reshape %cum_12 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_13 = stablehlo.add %cum_12, %w13 : tensor<2xf32>
  %cum_13_2d = stablehlo.reshape %cum_13 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_14 = stablehlo.add %cum_13, %w14 : tensor<2xf32>
  %cum_14_2d = stablehlo.reshape %cum_14 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_15 = stablehlo.add %cum_14, %w15 : tensor<2xf32>
  %cum_15_2d = stablehlo.reshape %cum_15 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_16 = stablehlo.add %cum_15, %w16 : tensor<2xf32>
  %cum_16_2d = stablehlo.reshape %cum_16 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_17 = stablehlo.add %cum_16, %w17 : tensor<2xf32>
  %cum_17_2d = stablehlo.reshape %cum_17 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_18 = stablehlo.add %cum_17, %w18 : tensor<2xf32>
  %cum_18_2d = stablehlo.reshape %cum_18 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_19 = stablehlo.add %cum_18, %w19 : tensor<2xf32>
  %cum_19_2d = stablehlo.reshape %cum_19 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_20 = stablehlo.add %cum_19, %w20 : tensor<2xf32>
  %cum_20_2d = stablehlo.reshape %cum_20 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_21 = stablehlo.add %cum_20, %w21 : tensor<2xf32>
  %cum_21_2d = stablehlo.reshape %cum_21 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_22 = stablehlo.add %cum_21, %w22 : tensor<2xf32>
  %cum_22_2d = stablehlo.reshape %cum_22 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_23 = stablehlo.add %cum_22, %w23 : tensor<2xf32>
  %cum_23_2d = stablehlo.reshape %cum_23 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_24 = stablehlo.add %cum_23, %w24 : tensor<2xf32>
  %cum_24_2d = stablehlo.reshape %cum_24 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_25 = stablehlo.add %cum_24, %w25 : tensor<2xf32>
  %cum_25_2d = stablehlo.reshape %cum_25 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_26 = stablehlo.add %cum_25, %w26 : tensor<2xf32>
  %cum_26_2d = stablehlo.reshape %cum_26 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_27 = stablehlo.add %cum_26, %w27 : tensor<2xf32>
  %cum_27_2d = stablehlo.reshape %cum_27 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_28 = stablehlo.add %cum_27, %w28 : tensor<2xf32>
  %cum_28_2d = stablehlo.reshape %cum_28 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_29 = stablehlo.add %cum_28, %w29 : tensor<2xf32>
  %cum_29_2d = stablehlo.reshape %cum_29 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_30 = stablehlo.add %cum_29, %w30 : tensor<2xf32>
  %cum_30_2d = stablehlo.reshape %cum_30 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_31 = stablehlo.add %cum_30, %w31 : tensor<2xf32>
  %cum_31_2d = stablehlo.reshape %cum_31 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_32 = stablehlo.add %cum_31, %w32 : tensor<2xf32>
  %cum_32_2d = stablehlo.reshape %cum_32 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_33 = stablehlo.add %cum_32, %w33 : tensor<2xf32>
  %cum_33_2d = stablehlo.reshape %cum_33 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_34 = stablehlo.add %cum_33, %w34 : tensor<2xf32>
  %cum_34_2d = stablehlo.reshape %cum_34 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_35 = stablehlo.add %cum_34, %w35 : tensor<2xf32>
  %cum_35_2d = stablehlo.reshape %cum_35 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_36 = stablehlo.add %cum_35, %w36 : tensor<2xf32>
  %cum_36_2d = stablehlo.reshape %cum_36 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_37 = stablehlo.add %cum_36, %w37 : tensor<2xf32>
  %cum_37_2d = stablehlo.reshape %cum_37 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_38 = stablehlo.add %cum_37, %w38 : tensor<2xf32>
  %cum_38_2d = stablehlo.reshape %cum_38 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_39 = stablehlo.add %cum_38, %w39 : tensor<2xf32>
  %cum_39_2d = stablehlo.reshape %cum_39 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_40 = stablehlo.add %cum_39, %w40 : tensor<2xf32>
  %cum_40_2d = stablehlo.reshape %cum_40 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_41 = stablehlo.add %cum_40, %w41 : tensor<2xf32>
  %cum_41_2d = stablehlo.reshape %cum_41 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_42 = stablehlo.add %cum_41, %w42 : tensor<2xf32>
  %cum_42_2d = stablehlo.reshape %cum_42 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_43 = stablehlo.add %cum_42, %w43 : tensor<2xf32>
  %cum_43_2d = stablehlo.reshape %cum_43 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_44 = stablehlo.add %cum_43, %w44 : tensor<2xf32>
  %cum_44_2d = stablehlo.reshape %cum_44 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_45 = stablehlo.add %cum_44, %w45 : tensor<2xf32>
  %cum_45_2d = stablehlo.reshape %cum_45 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_46 = stablehlo.add %cum_45, %w46 : tensor<2xf32>
  %cum_46_2d = stablehlo.reshape %cum_46 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_47 = stablehlo.add %cum_46, %w47 : tensor<2xf32>
  %cum_47_2d = stablehlo.reshape %cum_47 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_48 = stablehlo.add %cum_47, %w48 : tensor<2xf32>
  %cum_48_2d = stablehlo.reshape %cum_48 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_49 = stablehlo.add %cum_48, %w49 : tensor<2xf32>
  %cum_49_2d = stablehlo.reshape %cum_49 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_50 = stablehlo.add %cum_49, %w50 : tensor<2xf32>
  %cum_50_2d = stablehlo.reshape %cum_50 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_51 = stablehlo.add %cum_50, %w51 : tensor<2xf32>
  %cum_51_2d = stablehlo.reshape %cum_51 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_52 = stablehlo.add %cum_51, %w52 : tensor<2xf32>
  %cum_52_2d = stablehlo.reshape %cum_52 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_53 = stablehlo.add %cum_52, %w53 : tensor<2xf32>
  %cum_53_2d = stablehlo.reshape %cum_53 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_54 = stablehlo.add %cum_53, %w54 : tensor<2xf32>
  %cum_54_2d = stablehlo.reshape %cum_54 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_55 = stablehlo.add %cum_54, %w55 : tensor<2xf32>
  %cum_55_2d = stablehlo.reshape %cum_55 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_56 = stablehlo.add %cum_55, %w56 : tensor<2xf32>
  %cum_56_2d = stablehlo.reshape %cum_56 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_57 = stablehlo.add %cum_56, %w57 : tensor<2xf32>
  %cum_57_2d = stablehlo.reshape %cum_57 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_58 = stablehlo.add %cum_57, %w58 : tensor<2xf32>
  %cum_58_2d = stablehlo.reshape %cum_58 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_59 = stablehlo.add %cum_58, %w59 : tensor<2xf32>
  %cum_59_2d = stablehlo.reshape %cum_59 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_60 = stablehlo.add %cum_59, %w60 : tensor<2xf32>
  %cum_60_2d = stablehlo.reshape %cum_60 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_61 = stablehlo.add %cum_60, %w61 : tensor<2xf32>
  %cum_61_2d = stablehlo.reshape %cum_61 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_62 = stablehlo.add %cum_61, %w62 : tensor<2xf32>
  %cum_62_2d = stablehlo.reshape %cum_62 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum_63 = stablehlo.add %cum_62, %w63 : tensor<2xf32>
  %cum_63_2d = stablehlo.reshape %cum_63 : (tensor<2xf32>) -> tensor<2x1xf32>
  %cum = stablehlo.concatenate %cum_0_2d, %cum_1_2d, %cum_2_2d, %cum_3_2d, %cum_4_2d, %cum_5_2d, %cum_6_2d, %cum_7_2d, %cum_8_2d, %cum_9_2d, %cum_10_2d, %cum_11_2d, %cum_12_2d, %cum_13_2d, %cum_14_2d, %cum_15_2d, %cum_16_2d, %cum_17_2d, %cum_18_2d, %cum_19_2d, %cum_20_2d, %cum_21_2d, %cum_22_2d, %cum_23_2d, %cum_24_2d, %cum_25_2d, %cum_26_2d, %cum_27_2d, %cum_28_2d, %cum_29_2d, %cum_30_2d, %cum_31_2d, %cum_32_2d, %cum_33_2d, %cum_34_2d, %cum_35_2d, %cum_36_2d, %cum_37_2d, %cum_38_2d, %cum_39_2d, %cum_40_2d, %cum_41_2d, %cum_42_2d, %cum_43_2d, %cum_44_2d, %cum_45_2d, %cum_46_2d, %cum_47_2d, %cum_48_2d, %cum_49_2d, %cum_50_2d, %cum_51_2d, %cum_52_2d, %cum_53_2d, %cum_54_2d, %cum_55_2d, %cum_56_2d, %cum_57_2d, %cum_58_2d, %cum_59_2d, %cum_60_2d, %cum_61_2d, %cum_62_2d, %cum_63_2d, dim = 1 : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> !c
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
  return %token : tensor<2xi32>
}
